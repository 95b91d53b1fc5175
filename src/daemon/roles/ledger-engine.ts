import type { Config, SourceConfig } from '../../config/schema.js';
import type { Poller } from '../../poller/poller.js';
import { RESULT_OF } from '../../poller/stream-kind.js';
import type { RuleDefinition } from '../../rules/registry.js';
import { RuleEngine } from '../../rules/rule-engine.js';
import { BusinessCalendar } from '../../sla/business-calendar.js';
import type { Clock } from '../../util/clock.js';
import { TransferWatchError, errorMessageWithCode } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';

/** What a read of the service's history for the ledger needs: the config, the rules to judge, a poller to re-read with. */
export interface LedgerReadOptions {
  config: Config;
  rules: readonly RuleDefinition[];
  replayPoller: (source: SourceConfig) => Poller;
  clock: Clock;
  logger: Logger;
}

/**
 * A rule engine that judges the ledger over a span of the service's history, as the live rules do — the backfill's,
 * a re-judgement's, a given-up window's read at last: every arrival kept (the span is read, not lived through), the
 * config's named calendars.
 */
export function ledgerEngine(rules: readonly RuleDefinition[], o: { config: Config; clock: Clock; logger: Logger }): RuleEngine {
  return new RuleEngine([...rules], {
    clock: o.clock,
    logger: o.logger,
    sources: o.config.sources.map((s) => s.name),
    displayTimezone: o.config.display_timezone,
    keepHistory: true,
    calendars: new Map(Object.entries(o.config.calendars).map(([name, c]) => [name, new BusinessCalendar(c)])),
  });
}

/**
 * Every successful transfer of every source over [from, until] into `engine`, window by window, each read again after a
 * failure; a source that cannot be read whole throws (`history_unread`, naming it and why). Returns how many were read.
 */
export async function rereadSuccesses(o: { config: Config; replayPoller: (source: SourceConfig) => Poller }, engine: RuleEngine, from: number, until: number): Promise<number> {
  let read = 0;
  for (const source of o.config.sources) {
    for (const stream of o.replayPoller(source).streams) {
      if (RESULT_OF[stream.kind] !== 'success') continue;
      try {
        read += await stream.reread(from, until, (t) => void engine.observe(t));
      } catch (err) {
        throw new TransferWatchError('history_unread', `the history of source "${source.name}" (${stream.kind}) could not be read between ${new Date(from).toISOString()} and ${new Date(until).toISOString()}: ${errorMessageWithCode(err)}`, { cause: err });
      }
    }
  }
  return read;
}
