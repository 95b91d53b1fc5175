/** One send attempt of a notification, as the status page shows it. */
export interface SendOutcome {
  at: number;
  receiver: string;
  integration: string;
  /**
   * In the history's words (its attempts' `outcome`): `retrying` failed and will be tried again, `failed` failed and
   * will not be by this process (a stop cut it short, or it was not retryable), `gave_up` abandoned for good.
   */
  outcome: 'sent' | 'failed' | 'retrying' | 'gave_up';
  /** The notification's status: a firing or a resolved group. */
  status: 'firing' | 'resolved';
  /** The notification's alerts, each named with its labels (`TransferErrorBurst {user=BANK1}`), deduplicated. */
  alerts: string[];
  attempts: number;
  /** Already redacted of receiver secrets (webhook URLs, passwords). */
  error?: string;
}

/**
 * A bounded in-memory ring of recent send outcomes. Not persisted: it answers "what happened lately" for a
 * person, while counts over time are the metrics' job.
 */
export class RecentSends {
  private readonly items: SendOutcome[] = [];

  constructor(private readonly capacity = 100) {}

  add(outcome: SendOutcome): void {
    this.items.push(outcome);
    if (this.items.length > this.capacity) this.items.splice(0, this.items.length - this.capacity);
  }

  /** Newest first. */
  list(): SendOutcome[] {
    return this.items.map((o) => ({ ...o, alerts: [...o.alerts] })).reverse();
  }
}
