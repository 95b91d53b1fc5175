import type { SlaLedgerStore } from '../../history/sla-ledger-store.js';
import type { RejudgeRequest, RejudgeResult } from '../../http/sla-routes.js';
import type { OccurrenceRecord } from '../../sla/occurrence.js';
import { TransferWatchError, errorFields, errorMessage } from '../../util/errors.js';
import { ledgerEngine, rereadSuccesses, type LedgerReadOptions } from './ledger-engine.js';

/** Local dates are of each rule's zone: the instants read reach this far either side of the dates in UTC. */
const ZONE_REACH_MS = 14 * 3_600_000;
/** Changes listed in the answer at most (every one is counted). */
const CHANGES_LISTED = 200;

export interface SlaRejudgeOptions extends LedgerReadOptions {
  ledger: SlaLedgerStore;
}

/**
 * `sla rejudge` (contract 11c): re-decide a span of the ledger from the service's history, as the live rules decide
 * today — an existing ledger is never rewritten silently, only on this request. Every source's successes are read
 * over the span (and the windows and closes at its ends), each window read again after a failure; a span that cannot
 * be read whole changes nothing. The occurrences closed by then replace the ledger's (excuses kept beside them), open
 * ones are left to the live rules; the event (by, span, how many changed) goes in the SLA history. One at a time per
 * process; any replica can run it (the service is read, the ledger written, as by the backfill).
 */
export class SlaRejudge {
  private running = false;

  constructor(private readonly o: () => SlaRejudgeOptions) {}

  async run(req: RejudgeRequest): Promise<RejudgeResult> {
    if (this.running) throw new TransferWatchError('sla_rejudge_running', 'a re-judgement is running on this daemon; try again when it is done');
    this.running = true;
    const o = this.o();
    try {
      return await this.rejudge(o, req);
    } catch (err) {
      o.logger.warn({ from: req.from, to: req.to, rule: req.rule, err: errorFields(err) }, 'SLA rejudge failed; nothing was changed');
      throw err;
    } finally {
      this.running = false;
    }
  }

  private async rejudge(o: SlaRejudgeOptions, req: RejudgeRequest): Promise<RejudgeResult> {
    const rules = o.rules.filter((r) => r.type === 'missing_file' && (req.rule === undefined || r.name === req.rule));
    if (rules.length === 0) {
      throw new TransferWatchError('sla_rule_unknown', req.rule === undefined ? 'no missing_file rule is configured: nothing to re-judge' : `no missing_file rule "${req.rule}" is configured`);
    }
    const now = o.clock.now();
    const engine = ledgerEngine(rules, o);
    const first = Date.parse(`${req.from}T00:00:00Z`) - ZONE_REACH_MS;
    const last = Date.parse(`${req.to}T23:59:59.999Z`) + ZONE_REACH_MS;
    // The windows of the first deadlines (and, where windows overlap, what the deadlines before took), and the closes
    // of the last: the rules' own history need either side.
    const reach = engine.rulesReach();
    const readFrom = first - reach;
    const readUntil = Math.min(now, last + reach);
    if (readFrom >= readUntil) throw new TransferWatchError('sla_rejudge_future', `${req.from} is not in the past: nothing to re-judge`);
    o.logger.info({ rules: rules.map((r) => r.name), from: req.from, to: req.to, read_from: new Date(readFrom).toISOString(), read_until: new Date(readUntil).toISOString(), by: req.by }, 'SLA rejudge: reading the service history');
    let transfers: number;
    try {
      transfers = await rereadSuccesses(o, engine, readFrom, readUntil);
    } catch (err) {
      throw new TransferWatchError('sla_rejudge_unread', `${errorMessage(err)}; nothing was changed`, { cause: err });
    }
    const judged: OccurrenceRecord[] = [];
    let open = 0;
    for (const { occurrences } of engine.occurrencesBetween(first, last, { from: readFrom, until: readUntil })) {
      for (const occ of occurrences) {
        if (occ.local_date < req.from || occ.local_date > req.to) continue;
        if (occ.final) judged.push(occ);
        else open++;
      }
    }
    const changes = await o.ledger.rejudge(judged, { at: now, by: req.by, reason: req.reason, rule: req.rule, from: req.from, to: req.to });
    o.logger.info({ rules: rules.map((r) => r.name), from: req.from, to: req.to, transfers, judged: judged.length, open, changed: changes.length, by: req.by }, 'SLA rejudge done');
    return { from: req.from, to: req.to, rules: rules.map((r) => r.name), judged: judged.length, open, changed: changes.length, changes: changes.slice(0, CHANGES_LISTED), transfers };
  }
}
