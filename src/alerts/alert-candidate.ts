import type { Alert, Labels, TransferSample } from './alert.js';

/**
 * What a rule's evaluation says about one alert: its condition holds now (in `alerts`), or it has ended with
 * final words (in `resolved`, e.g. "the file arrived late at ..."). The alert store owns the lifecycle:
 * pending → firing after `for`, staying firing for `keepFiringFor` after the condition clears.
 */
export interface AlertCandidate {
  labels: Labels;
  /** The label set's fingerprint when the rule has it already (it hashes a group's labels once); else the store does. */
  fingerprint?: string;
  annotations: Record<string, string>;
  values: Record<string, number | string>;
  samples: TransferSample[];
  /** ms the condition must hold before the alert fires (0: fires at once). */
  for: number;
  /** ms the alert keeps firing after the condition clears (0: resolves at once). */
  keepFiringFor: number;
  /**
   * In `resolved`: these final words end only an alert that became active before this instant (the late file that
   * ended an episode ends that episode, not one that began after it). Unset: whatever alert is stored.
   */
  endsEpisodeBefore?: number;
}

export interface RuleEvaluation {
  /** The rule's name (its `alertname`). */
  rule: string;
  /** Alerts whose condition holds now. */
  alerts: AlertCandidate[];
  /** Alerts that ended, with the annotations and values their resolved notification should carry. */
  resolved?: AlertCandidate[];
  /**
   * Alerts whose condition no longer holds, with the figures of now (a burst down to 2 failures). They end as
   * usual (after keep_firing_for); these figures replace the firing ones, so a resolved message tells how
   * things stand at resolution and not the last firing count.
   */
  cleared?: AlertCandidate[];
  /**
   * The rule could not judge what it does not report: its data are not read whole yet (a new process reading its way
   * to the present, a window whose history is not read). Its alerts not in `alerts` stay as they are — neither
   * resolved nor held by keep_firing_for — until an evaluation on whole data says (contract section 11b).
   */
  undecided?: boolean;
}

/** A lifecycle step of one alert, for notification and metrics. `inactive`: not in the store (new, or a pending one dropped). */
export interface AlertChange {
  fingerprint: string;
  from: 'inactive' | 'pending' | 'firing' | 'resolved';
  to: 'inactive' | 'pending' | 'firing' | 'resolved';
  alert: Alert;
}
