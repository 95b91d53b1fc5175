import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openHistoryDatabase } from '../src/history/history-database.js';
import type { AlertEventRecord, AttemptRecord, HistoryRecord, OccurrenceRecord } from '../src/history/history-records.js';
import { historySchema } from '../src/history/history-schema.js';
import { HistoryStore } from '../src/history/history-store.js';
import { parseMatchers } from '../src/notify/matcher.js';
import { silentLogger } from '../src/util/logger.js';
import { HAVE_POSTGRES, PostgresServer } from '../test/helpers/postgres-server.js';
import { percentile } from './stats.js';

export interface SlaReportResult {
  store: 'sqlite' | 'postgres';
  keys: number;
  days: number;
  occurrences: number;
  writeSeconds: number;
  /** The report over every day (keys × days occurrences), p50 and max of the runs. */
  yearP50Ms: number;
  yearMaxMs: number;
  /** One month of the same. */
  monthP50Ms: number;
}

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

/** `keys` partners × `days` daily deadlines in the ledger, then the report (tallies and lateness) over all of it and over a month. */
async function measureReport(store: HistoryStore, kind: 'sqlite' | 'postgres', keys: number, days: number, runs: number): Promise<SlaReportResult> {
  await store.ensureSchema();
  const rnd = random(3);
  const first = Date.UTC(2025, 9, 1, 11);
  const t0 = performance.now();
  let batch: OccurrenceRecord[] = [];
  for (let d = 0; d < days; d++) {
    const deadline = first + d * DAY;
    const date = new Date(deadline).toISOString().slice(0, 10);
    for (let k = 0; k < keys; k++) {
      const r = rnd();
      const outcome = r < 0.9 ? 'on_time' : r < 0.97 ? 'late' : 'missing';
      const lateness = outcome === 'late' ? Math.floor(rnd() * 14_400) : null;
      batch.push({
        kind: 'occurrence',
        id: `Statement\u001fuser=BANK${k}\u001f${deadline}`,
        at: deadline,
        rule: 'Statement',
        key: { user: `BANK${k}` },
        key_text: `user=BANK${k}`,
        local_date: date,
        deadline,
        timezone: 'America/Sao_Paulo',
        outcome,
        final: true,
        arrived_at: outcome === 'missing' ? null : deadline + (lateness ?? -3_600) * 1000,
        lateness_seconds: lateness,
        count: outcome === 'missing' ? 0 : 1,
        min_count: 1,
        files: outcome === 'missing' ? [] : [{ file: `EXTRATO_BANK${k}.RET`, at: deadline, source: 'prod' }],
        closes_at: deadline + DAY,
        after_close: [],
      });
      if (batch.length === 2_000) {
        await store.write(batch);
        batch = [];
      }
    }
  }
  if (batch.length > 0) await store.write(batch);
  const writeSeconds = (performance.now() - t0) / 1000;
  const lastDate = new Date(first + (days - 1) * DAY).toISOString().slice(0, 10);
  const firstDate = new Date(first).toISOString().slice(0, 10);
  const year: number[] = [];
  const month: number[] = [];
  for (let i = 0; i < runs; i++) {
    year.push(await time(() => store.ledger.tally({ from: firstDate, to: lastDate })));
    month.push(await time(() => store.ledger.tally({ from: lastDate.slice(0, 8) + '01', to: lastDate })));
  }
  return { store: kind, keys, days, occurrences: keys * days, writeSeconds, yearP50Ms: percentile(year, 50), yearMaxMs: Math.max(...year), monthP50Ms: percentile(month, 50) };
}

/** The SLA report line: `keys` × `days` occurrences on SQLite and (where its binaries are) PostgreSQL. */
export function measureSlaReports(keys: number, days: number, runs: number): Promise<SlaReportResult[]> {
  return onEachStore((store, kind) => measureReport(store, kind, keys, days, runs));
}

/** `measure` on a fresh SQLite store, then on a fresh database of a real PostgreSQL started for it (where installed). */
async function onEachStore<T>(measure: (store: HistoryStore, kind: 'sqlite' | 'postgres') => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'tw-bench-history-'));
  const run = async (config: unknown, kind: 'sqlite' | 'postgres'): Promise<void> => {
    const store = new HistoryStore(openHistoryDatabase(historySchema.parse(config), dir, silentLogger()));
    try {
      out.push(await measure(store, kind));
    } finally {
      await store.close();
    }
  };
  try {
    await run({}, 'sqlite');
    if (HAVE_POSTGRES) {
      const server = await PostgresServer.start();
      try {
        await run({ postgres: { url: await server.createDatabase('bench') } }, 'postgres');
      } finally {
        await server.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** The history's query line on SQLite and (where its binaries are) a real PostgreSQL started for it. */
export function measureHistoryQueries(events: number, queries: number): Promise<HistoryQueryResult[]> {
  return onEachStore((store, kind) => measureStore(store, kind, events, queries));
}
