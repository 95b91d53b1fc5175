import { z } from 'zod';
import type { Config } from '../../config/schema.js';
import type { HistoryStore } from '../../history/history-store.js';
import type { AttemptRecord } from '../../history/history-records.js';
import { EMAIL_DEFAULT_TIMEOUT_MS, smtpTransportOptions } from '../../notify/integrations/email/email-integration.js';
import { receiverSecrets } from '../../notify/integrations/registry.js';
import type { ReceiverConfig } from '../../notify/receiver-schema.js';
import { CronSchedule } from '../../rules/cron-schedule.js';
import { slaObjective, type RuleDefinition } from '../../rules/registry.js';
import { reportCsv, reportRows, reportTable, type SlaReportRow } from '../../sla/sla-report.js';
import { dueOfRule } from '../../rules/due-deadlines.js';
import type { SlaReportSchedule } from '../../sla/sla-schema.js';
import type { StateStore } from '../../state/state-store.js';
import type { Clock } from '../../util/clock.js';
import { errorMessage } from '../../util/errors.js';
import { localDateIn } from '../../util/format-time.js';
import type { Logger } from '../../util/logger.js';
import { redactSecrets } from '../../util/redact.js';

export const SLA_REPORTS_STATE_KEY = 'sla.reports';
/** A report that could not be sent is tried again this often, until it is or its next run comes. */
const RETRY_MS = 5 * 60_000;
/** A run missed while no leader ran (or the daemon was down) is sent late if it is at most this old. */
const CATCH_UP_MS = 24 * 3_600_000;
/** Timers never sleep longer than this, so a clock jump is noticed. */
const MAX_TIMER_MS = 60_000;

const sentSchema = z.record(z.string(), z.string());

export interface SlaReportScheduleOptions {
  config: () => Config;
  rules: () => readonly RuleDefinition[];
  history: HistoryStore;
  state: StateStore;
  clock: Clock;
  logger: Logger;
  /** Each try of each integration, kept as a notification attempt of the history (contract section 11a). */
  recordAttempt?: (attempt: AttemptRecord) => Promise<void>;
}

/** The local dates a period covers when a report runs at `t`: [from, to], both inclusive. */
export function reportPeriod(period: SlaReportSchedule['period'], t: number, timeZone: string): { from: string; to: string } {
  const today = localDateIn(t, timeZone);
  const [y, m, d] = today.split('-').map(Number) as [number, number, number];
  const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
  const day = Date.UTC(y, m - 1, d);
  switch (period) {
    case 'previous_day':
      return { from: iso(day - 86_400_000), to: iso(day - 86_400_000) };
    case 'previous_week': {
      const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday 0
      const monday = day - (weekday + 7) * 86_400_000;
      return { from: iso(monday), to: iso(monday + 6 * 86_400_000) };
    }
    case 'current_month':
      return { from: iso(Date.UTC(y, m - 1, 1)), to: today };
    case 'previous_month':
      return { from: iso(Date.UTC(y, m - 2, 1)), to: iso(Date.UTC(y, m - 1, 0)) };
  }
}

/**
 * Scheduled SLA reports (contract section 11, `sla.reports`), run by the leader: at each run of a report's cron
 * the table of its period goes to its receiver (email with the CSV attached, Slack, webhook JSON). Each period
 * is sent once: what was sent is kept in the leader's state (a restart or a new leader does not send it again;
 * a run missed while nobody led is sent when one leads again, up to a day late); a failed send is retried.
 */
export class SlaReportSchedules {
  private timer: NodeJS.Timeout | undefined;
  private sent: Record<string, string> = {};
  private readonly retryAt = new Map<string, number>();
  /** Tries of each report's current period so far (the attempt number of the history's record). */
  private readonly tries = new Map<string, number>();
  private running = false;
  private stopped = false;
  /** Each report's cron runs, kept across ticks (a reload that changes a report makes a new key). */
  private readonly schedules = new Map<string, CronSchedule>();

  constructor(private readonly opts: SlaReportScheduleOptions) {}

  async start(): Promise<void> {
    const raw = await this.opts.state.load(SLA_REPORTS_STATE_KEY).catch(() => undefined);
    const parsed = sentSchema.safeParse(raw ?? {});
    this.sent = parsed.success ? parsed.data : {};
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private reports(): Array<{ key: string; report: SlaReportSchedule; schedule: CronSchedule }> {
    return this.opts.config().sla.reports.map((report, i) => {
      const key = `${i}:${report.cron}:${report.timezone}:${report.period}:${report.receiver}:${report.rule ?? ''}`;
      let schedule = this.schedules.get(key);
      if (!schedule) this.schedules.set(key, (schedule = new CronSchedule(report.cron, report.timezone)));
      return { key, report, schedule };
    });
  }

  /** Send what is due (a run passed whose period was not sent), then sleep until the next run or retry. */
  private async tick(): Promise<void> {
    if (this.stopped || this.running) return;
    this.running = true;
    const now = this.opts.clock.now();
    let next = now + MAX_TIMER_MS;
    try {
      for (const { key, report, schedule } of this.reports()) {
        const last = schedule.atOrBefore(now);
        const upcoming = schedule.after(now);
        if (upcoming !== undefined) next = Math.min(next, upcoming);
        if (last === undefined || now - last > CATCH_UP_MS) continue;
        const period = reportPeriod(report.period, last, report.timezone);
        const id = `${period.from}..${period.to}`;
        if (this.sent[key] === id) continue;
        const retry = this.retryAt.get(key);
        if (retry !== undefined && retry > now) {
          next = Math.min(next, retry);
          continue;
        }
        try {
          this.tries.set(`${key}/${id}`, (this.tries.get(`${key}/${id}`) ?? 0) + 1);
          await this.send(report, period, { key, id, attempt: this.tries.get(`${key}/${id}`) ?? 1 });
          this.retryAt.delete(key);
          this.sent[key] = id;
          await this.opts.state.save(SLA_REPORTS_STATE_KEY, this.sent);
          this.opts.logger.info({ receiver: report.receiver, period: id, rule: report.rule }, 'SLA report sent');
        } catch (err) {
          this.retryAt.set(key, now + RETRY_MS);
          next = Math.min(next, now + RETRY_MS);
          this.opts.logger.warn({ receiver: report.receiver, period: id, err: { type: 'SlaReportError', message: errorMessage(err) }, retryInMs: RETRY_MS }, 'SLA report not sent; trying again');
        }
      }
    } finally {
      this.running = false;
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), Math.max(10, Math.min(MAX_TIMER_MS, next - this.opts.clock.now() + 5)));
    this.timer.unref();
  }

  private async send(report: SlaReportSchedule, period: { from: string; to: string }, run: { key: string; id: string; attempt: number }): Promise<void> {
    const { history } = this.opts;
    // The first run can come before the tables are made (a first start; the migrations take a few turns).
    await history.ensureSchema();
    const rules = this.opts.rules();
    const now = this.opts.clock.now();
    const calendars = this.opts.config().calendars;
    const tallies = await history.ledger.tally({ ...period, rule: report.rule });
    const rows = (await reportRows(tallies, (r) => slaObjective(rules, r), (r) => dueOfRule(rules, calendars, r, period.from, period.to, now))).map((row) => ({
      ...row,
      period_from: period.from,
      period_to: period.to,
    }));
    const receiver = this.opts.config().receivers.find((r) => r.name === report.receiver);
    if (!receiver) throw new Error(`receiver "${report.receiver}" is not configured any more`);
    const secrets = receiverSecrets(receiver);
    const results = await deliver(receiver, report, period, rows, this.opts.clock);
    const title = reportTitle(report, period);
    for (const r of results) {
      const error = r.error === undefined ? null : redactSecrets(errorMessage(r.error), secrets);
      await this.opts
        .recordAttempt?.({
          kind: 'attempt',
          id: `sla-report\u001f${run.key}\u001f${run.id}\u001f${r.integration}\u001f${run.attempt}`,
          at: r.at,
          receiver: report.receiver,
          integration: r.integration,
          status: 'report',
          fingerprints: [],
          alerts: [],
          title,
          outcome: error === null ? 'sent' : 'retrying',
          attempt: run.attempt,
          error,
          duration_ms: r.durationMs,
          about: 'sla_report',
          period: run.id,
        })
        .catch((err: unknown) => this.opts.logger.warn({ err: { type: 'HistoryError', message: errorMessage(err) } }, 'SLA report attempt not journaled for the history'));
    }
    const failed = results.find((r) => r.error !== undefined);
    if (failed) throw new Error(redactSecrets(`${failed.integration}: ${errorMessage(failed.error)}`, secrets));
  }
}

function reportTitle(report: SlaReportSchedule, period: { from: string; to: string }): string {
  return `SLA report ${period.from} to ${period.to}${report.rule ? ` (${report.rule})` : ''}`;
}

/** One integration's try: when it began, how long it took, and its error if it failed. */
interface DeliveryResult {
  integration: 'email' | 'slack' | 'webhook';
  at: number;
  durationMs: number;
  error?: unknown;
}

/** Every integration of the receiver is tried (one failing does not keep the others from getting the report). */
async function deliver(receiver: ReceiverConfig, report: SlaReportSchedule, period: { from: string; to: string }, rows: SlaReportRow[], clock: Clock): Promise<DeliveryResult[]> {
  const createdAt = clock.now();
  const title = reportTitle(report, period);
  const table = reportTable(rows);
  const results: DeliveryResult[] = [];
  const attempt = async (integration: DeliveryResult['integration'], send: () => Promise<void>): Promise<void> => {
    // The daemon's clock, as every other record of the history (the demo's is shifted).
    const at = clock.now();
    const started = performance.now();
    try {
      await send();
      results.push({ integration, at, durationMs: performance.now() - started });
    } catch (error) {
      results.push({ integration, at, durationMs: performance.now() - started, error });
    }
  };
  const e = receiver.email;
  if (e) {
    await attempt('email', async () => {
      const { default: nodemailer } = await import('nodemailer');
      const transport = nodemailer.createTransport(smtpTransportOptions(e.smtp, EMAIL_DEFAULT_TIMEOUT_MS));
      try {
        await transport.sendMail({
          from: e.from,
          to: e.to,
          subject: title,
          text: `${title}, local dates in each rule's time zone.\n\n${table}`,
          attachments: [{ filename: `sla-${period.from}-${period.to}.csv`, content: reportCsv(rows, { ...period, createdAt }), contentType: 'text/csv; charset=utf-8' }],
        });
      } finally {
        transport.close();
      }
    });
  }
  const slack = receiver.slack;
  if (slack) {
    await attempt('slack', async () => {
      const { IncomingWebhook } = await import('@slack/webhook');
      await new IncomingWebhook(slack.webhook_url, { timeout: 10_000 }).send({ text: `*${title}*\n\`\`\`\n${table.replaceAll('```', "'''")}\`\`\`` });
    });
  }
  const w = receiver.webhook;
  if (w) {
    await attempt('webhook', async () => {
      const res = await fetch(w.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(w.bearer_token ? { authorization: `Bearer ${w.bearer_token}` } : {}), ...w.headers },
        body: JSON.stringify({ kind: 'sla_report', from: period.from, to: period.to, rule: report.rule ?? null, rows }),
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) throw new Error(`webhook answered HTTP ${res.status}`);
    });
  }
  return results;
}
