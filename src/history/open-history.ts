import type { HistoryConfig } from './history-schema.js';
import type { Logger } from '../util/logger.js';
import { openHistoryDatabase } from './history-database.js';
import { HistoryStore } from './history-store.js';

/** Whether this process has a history, and where. */
export type HistoryAvailability =
  | { state: 'sqlite' | 'postgres'; store: HistoryStore; where: string }
  | { state: 'disabled'; store: undefined; why: string };

/**
 * The history store the configuration asks for (contract section 11): PostgreSQL with `history.postgres`, else
 * SQLite in `state.dir`. Replicas of an HA deployment must share one database, so `ha:` without
 * `history.postgres` runs without history (each replica's own file would show a different past).
 */
export function openHistory(config: { history: HistoryConfig; stateDir: string; replicated: boolean }, logger: Logger): HistoryAvailability {
  if (!config.history.enabled) return disabled(logger, 'history.enabled is false');
  if (config.replicated && !config.history.postgres) {
    return disabled(logger, 'ha: without history.postgres (replicas must share one history database; set history.postgres)');
  }
  const opened = openHistoryDatabase(config.history, config.stateDir, logger);
  logger.info({ history: opened.where, retention_ms: config.history.retention }, `history of alerts and notifications kept in ${opened.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`);
  return { state: opened.dialect, store: new HistoryStore(opened), where: opened.where };
}

function disabled(logger: Logger, why: string): HistoryAvailability {
  logger.warn({ why }, 'running without history of alerts and notifications (and without SLA ledger)');
  return { state: 'disabled', store: undefined, why };
}
