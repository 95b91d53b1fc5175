import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openHistoryDatabase } from '../../src/history/history-database.js';
import { historySchema } from '../../src/history/history-schema.js';
import { HistoryStore } from '../../src/history/history-store.js';
import { keyText, type OccurrenceRecord } from '../../src/sla/occurrence.js';
import { silentLogger } from '../../src/util/logger.js';
import { BACKENDS, HistoryBackend } from '../helpers/history-backends.js';
import { eventually } from '../helpers/daemon-process.js';
import { sleep, tally } from './harness.js';
import { HEALTH_P99_BOUND_MS, LEGIT_KEY, RSS_BOUND_MB, legitDelivered, probeHealth, reportHostile, sampleRss, startHostileSetup, timedGet, underAttack, type HostileSetup } from './hostile-harness.js';

/**
 * Heavy reads of the history (issue 43): a ledger of two years for 150 partners (109,500 occurrences, one file each),
 * and four clients looping on the `/sla` month page, the two-year report, or pages of 5,000 occurrences — while a
 * prober measures `/healthz`, the simulator counts the daemon's polls, and the legitimate burst must be notified
 * once. Both databases: SQLite (on its own thread) and PostgreSQL.
 */

const ATTACK_MS = 6_000;
const PARTNERS = Array.from({ length: 150 }, (_, i) => `P${String(i + 1).padStart(3, '0')}`);
const DAYS = 730;
const DAY_MS = 86_400_000;

/** Two years of daily 09:00 UTC deadlines for every partner, up to yesterday: mostly on time, some late, a few missing. */
function* ledger(now: number): Generator<OccurrenceRecord> {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  for (let d = DAYS; d >= 1; d--) {
    const deadline = today - d * DAY_MS + 9 * 3_600_000;
    const localDate = new Date(deadline).toISOString().slice(0, 10);
    for (const [i, user] of PARTNERS.entries()) {
      const roll = (d * 31 + i * 17) % 100;
      const outcome = roll < 3 ? 'missing' : roll < 10 ? 'late' : 'on_time';
      const arrived = outcome === 'missing' ? null : deadline + (outcome === 'late' ? 600_000 : -1_800_000);
      const key = { user };
      yield {
        kind: 'occurrence',
        id: `PartnerFileMissing/${user}/${deadline}`,
        at: deadline,
        rule: 'PartnerFileMissing',
        key,
        key_text: keyText(key),
        local_date: localDate,
        deadline,
        timezone: 'UTC',
        outcome,
        final: true,
        arrived_at: arrived,
        lateness_seconds: outcome === 'late' ? 600 : null,
        count: arrived === null ? 0 : 1,
        min_count: 1,
        files: arrived === null ? [] : [{ file: `/in/${user}/EXTRATO_${localDate.replaceAll('-', '')}.RET`, at: arrived, source: 'sim' }],
        closes_at: deadline + DAY_MS,
        after_close: [],
      };
    }
  }
}

async function fill(history: Record<string, unknown>, stateDir: string): Promise<void> {
  const store = new HistoryStore(openHistoryDatabase(historySchema.parse(history), stateDir, silentLogger()));
  try {
    await store.ensureSchema();
    let batch: OccurrenceRecord[] = [];
    for (const o of ledger(Date.now())) {
      batch.push(o);
      if (batch.length === 5_000) {
        await store.write(batch);
        batch = [];
      }
    }
    await store.write(batch);
  } finally {
    await store.close();
  }
}

describe.each(BACKENDS)('reliability: heavy history reads (%s)', (kind) => {
  const backend = new HistoryBackend(kind);
  const setups: HostileSetup[] = [];
  afterEach(async () => {
    for (const s of setups.splice(0)) await s.cleanup();
  });
  afterAll(() => backend.close());

  // One daemon on the filled ledger for the three reads (filling it is most of a scenario's setup).
  let filled: { setup: HostileSetup; tally: Awaited<ReturnType<typeof legitDelivered>> } | undefined;
  afterAll(async () => {
    await filled?.setup.cleanup();
  });
  const onFilledLedger = async (): Promise<{ setup: HostileSetup; tally: Awaited<ReturnType<typeof legitDelivered>> }> => {
    if (filled) return filled;
    const { history } = await backend.config();
    const s = await startHostileSetup(`reads-${kind}`, {
      extraConfig: { history },
      extraRules: [
        {
          name: 'PartnerFileMissing',
          type: 'missing_file',
          match: { file: ['EXTRATO_*.RET'] },
          for_each: { label: 'user', values: PARTNERS },
          deadline: '0 9 * * *',
          window: '1d',
          severity: 'warning',
          sla: { objective: 0.95 },
        },
      ],
      prepare: (stateDir) => fill(history, stateDir),
    });
    filled = { setup: s, tally: await legitDelivered(s) };
    return filled;
  };

  const today = (): string => new Date().toISOString().slice(0, 10);
  const twoYearsAgo = (): string => new Date(Date.now() - DAYS * DAY_MS).toISOString().slice(0, 10);

  for (const [scenario, path] of [
    ['the /sla month page', () => '/sla'],
    ['the two-year report', () => `/api/v1/sla/report?from=${twoYearsAgo()}&to=${today()}`],
    ['pages of 5,000 occurrences', () => `/api/v1/sla/occurrences?from=${twoYearsAgo()}&to=${today()}&limit=5000`],
  ] as const) {
    it(`4 clients looping on ${scenario}: health answered, polling on schedule, the burst notified once`, async () => {
      const { setup: s, tally: t } = await onFilledLedger();
      let answered = 0;
      let limited = 0;
      const requestsBefore = s.sim.stats().reportRequests;
      const r = await underAttack(s.daemon, ATTACK_MS, async (signal) => {
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            while (!signal.aborted) {
              const res = await timedGet(`${s.daemon.url}${path()}`, 30_000);
              if (res.status === 200) answered += 1;
              else if (res.status === 429) limited += 1;
            }
          }),
        );
      });
      const polls = s.sim.stats().reportRequests - requestsBefore;
      reportHostile(`heavy reads (${kind}): ${scenario}`, `${answered} answered, ${limited} told to wait (429), ${polls} report requests meanwhile`, t, r);
      expect(answered).toBeGreaterThan(0);
      // Two streams polled every second for the attack's 6 s (12 polls): polling must not have stalled (SQLite on the
      // event loop let 7–9 through in 8 s).
      expect(polls).toBeGreaterThanOrEqual(8);
      expect(r.health.failed).toBe(0);
      expect(r.health.p99).toBeLessThan(HEALTH_P99_BOUND_MS);
      expect(r.rssMb).toBeLessThan(RSS_BOUND_MB);
      expect(t).toMatchObject({ delivered: 1, duplicated: 0, lost: 0, falseAlerts: 0 });
    }, 180_000);
  }

  it('a first start with a 30-day SLA backfill of 150 partners and hourly deadlines (108,000 occurrences): health answered throughout, the burst notified once', async () => {
    const { history } = await backend.config();
    const s = await startHostileSetup(`backfill-${kind}`, {
      extraConfig: { history, sla: { backfill: '30d' } },
      extraRules: [
        { name: 'PartnerHourlyFile', type: 'missing_file', match: { file: ['HOURLY_*.csv'] }, for_each: { label: 'user', values: PARTNERS }, deadline: '0 * * * *', window: '1h', severity: 'warning' },
      ],
      history: { ratePerMinute: 2, historyDays: 31 },
    });
    setups.push(s);
    const rss = sampleRss(s.daemon.proc.pid ?? 0);
    const probe = probeHealth(s.daemon.url);
    const done = await s.daemon.waitForLog((l) => l['msg'] === 'SLA backfill: rule filled' && l['rule'] === 'PartnerHourlyFile', 150_000);
    const health = await probe.stop();
    const r = { health, rssMb: rss.stop() };
    // The partners' hourly files never come: their alerts are notified too, and are not what this tallies.
    await eventually(() => s.webhook.keys().includes(LEGIT_KEY), 30_000);
    await sleep(1_500);
    const t = tally(
      [LEGIT_KEY],
      s.webhook.keys().filter((k) => !k.includes('PartnerHourlyFile')),
    );
    reportHostile(`heavy work (${kind}): 30-day SLA backfill`, `${String(done['occurrences'])} occurrences judged and written; healthz max ${Math.round(health.max)} ms`, t, r);
    expect(done['occurrences']).toBeGreaterThan(100_000);
    expect(health.failed).toBe(0);
    expect(health.p99).toBeLessThan(HEALTH_P99_BOUND_MS);
    expect(r.rssMb).toBeLessThan(RSS_BOUND_MB);
    expect(t).toMatchObject({ delivered: 1, duplicated: 0, lost: 0, falseAlerts: 0 });
  }, 240_000);
});
