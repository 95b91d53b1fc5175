import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openHistoryDatabase } from '../src/history/history-database.js';
import type { AlertEventRecord, AttemptRecord, HistoryRecord } from '../src/history/history-records.js';
import { historySchema } from '../src/history/history-schema.js';
import { HistoryStore } from '../src/history/history-store.js';
import { parseMatchers } from '../src/notify/matcher.js';
import { silentLogger } from '../src/util/logger.js';
import { HAVE_POSTGRES, PostgresServer } from '../test/helpers/postgres-server.js';
import { percentile } from './stats.js';

export interface HistoryQueryResult {
  store: 'sqlite' | 'postgres';
  events: number;
  insertSeconds: number;
  queries: number;
  /** One alertname, one week, first page of 100. */
  p50Ms: number;
  p95Ms: number;
  /** The same plus a label matcher answered outside the index (`user="BANKn"`). */
  withLabelP95Ms: number;
  /** Every attempt of one alert (its timeline). */
  timelineP95Ms: number;
}

const DAY = 86_400_000;
const ALERTNAMES = 50;
const USERS = 500;
const SPAN_DAYS = 400;
const WRITE_BATCH = 5_000;

/** A deterministic generator (mulberry32): the same history on every run and both stores. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * `events` records (alert events, and one attempt for every fourth) spread over 400 days, 50 alertnames and 500
 * users, as a year of a busy deployment leaves them.
 */
function* history(events: number, end: number): Generator<HistoryRecord[]> {
  const rnd = random(42);
  let batch: HistoryRecord[] = [];
  for (let i = 0; i < events; i++) {
    const alertname = `Alert${Math.floor(rnd() * ALERTNAMES)}`;
    const user = `BANK${Math.floor(rnd() * USERS)}`;
    const fingerprint = `${alertname}-${user}`;
    const at = end - Math.floor(rnd() * SPAN_DAYS * DAY);
    if (i % 4 === 3) {
      const attempt: AttemptRecord = {
        kind: 'attempt',
        id: `a${i}`,
        at,
        receiver: `team${i % 5}`,
        integration: 'webhook',
        status: 'firing',
        fingerprints: [fingerprint],
        alerts: [{ alertname, user, severity: 'critical' }],
        title: `[FIRING:1] ${alertname} (${user})`,
        outcome: 'sent',
        attempt: 1,
        error: null,
        duration_ms: 20,
      };
      batch.push(attempt);
    } else {
      const event: AlertEventRecord = {
        kind: 'alert',
        id: `e${i}`,
        at,
        event: i % 3 === 0 ? 'resolved' : 'firing',
        fingerprint,
        labels: { alertname, user, severity: 'critical', mft_instance: `PROD${i % 4}` },
        annotations: { summary: `${alertname} for ${user}` },
        silence_id: null,
        inhibited_by: null,
      };
      batch.push(event);
    }
    if (batch.length === WRITE_BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** Fill one store with `events` records, then time filtered first-page queries against it. */
async function measureStore(store: HistoryStore, kind: 'sqlite' | 'postgres', events: number, queries: number): Promise<HistoryQueryResult> {
  await store.ensureSchema();
  const end = Date.UTC(2026, 10, 25);
  const t0 = performance.now();
  for (const batch of history(events, end)) await store.write(batch);
  const insertSeconds = (performance.now() - t0) / 1000;
  const rnd = random(7);
  const plain: number[] = [];
  const withLabel: number[] = [];
  const timeline: number[] = [];
  for (let i = 0; i < queries; i++) {
    const alertname = `Alert${Math.floor(rnd() * ALERTNAMES)}`;
    const to = end - Math.floor(rnd() * (SPAN_DAYS - 7) * DAY);
    const week = { from: to - 7 * DAY, to, limit: 100 };
    plain.push(await time(() => store.alertEvents({ ...week, matchers: parseMatchers(`alertname="${alertname}"`) })));
    const user = `BANK${Math.floor(rnd() * USERS)}`;
    withLabel.push(await time(() => store.alertEvents({ ...week, matchers: parseMatchers(`alertname="${alertname}", user="${user}"`) })));
    timeline.push(await time(() => store.attempts({ matchers: [], from: 0, to: end, limit: 500, fingerprint: `${alertname}-${user}` })));
  }
  return {
    store: kind,
    events,
    insertSeconds,
    queries,
    p50Ms: percentile(plain, 50),
    p95Ms: percentile(plain, 95),
    withLabelP95Ms: percentile(withLabel, 95),
    timelineP95Ms: percentile(timeline, 95),
  };
}

/** The history's query line on SQLite and (where its binaries are) a real PostgreSQL started for it. */
export async function measureHistoryQueries(events: number, queries: number): Promise<HistoryQueryResult[]> {
  const out: HistoryQueryResult[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'tw-bench-history-'));
  try {
    const sqlite = new HistoryStore(openHistoryDatabase(historySchema.parse({}), dir, silentLogger()));
    try {
      out.push(await measureStore(sqlite, 'sqlite', events, queries));
    } finally {
      await sqlite.close();
    }
    if (HAVE_POSTGRES) {
      const server = await PostgresServer.start();
      try {
        const url = await server.createDatabase('bench');
        const pg = new HistoryStore(openHistoryDatabase(historySchema.parse({ postgres: { url } }), dir, silentLogger()));
        try {
          out.push(await measureStore(pg, 'postgres', events, queries));
        } finally {
          await pg.close();
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
