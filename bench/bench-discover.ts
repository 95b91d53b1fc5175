import { AlertStore } from '../src/alerts/alert-store.js';
import { calendarCandidates } from '../src/flows/calendar-candidates.js';
import { discoverFlows, type DiscoverReport } from '../src/flows/discover-flows.js';
import { proposalYaml } from '../src/flows/flow-report-format.js';
import { FlowSummaries } from '../src/flows/flow-summary.js';
import { parseRuleFile } from '../src/rules/load-rules.js';
import { compileMatch } from '../src/rules/match.js';
import type { RuleDefinition } from '../src/rules/registry.js';
import { RuleEngine } from '../src/rules/rule-engine.js';
import type { DataCompleteness } from '../src/rules/rule-evaluator.js';
import { BusinessCalendar } from '../src/sla/business-calendar.js';
import { UsualArrivals } from '../src/sla/usual-arrivals.js';
import { ESTATE_CALENDAR, ESTATE_CALENDAR_NAME, ESTATE_TIMEZONE, Estate, estateFlows, estateTruth, type EstateFlow } from '../src/simulator/estate.js';
import { HistoryGenerator } from '../src/simulator/generator.js';
import { getScenario } from '../src/simulator/scenarios.js';
import { startSimulator } from '../src/simulator/start-simulator.js';
import { transferOf } from '../src/source/record.js';
import type { Transfer } from '../src/source/transfer.js';
import { TransferHistoryClient } from '../src/source/transfer-history-client.js';
import { sourceSchema } from '../src/source/source-schema.js';
import { MemoryStateStore } from '../src/state/state-store.js';
import { ManualClock } from '../src/util/clock.js';
import { silentLogger } from '../src/util/logger.js';
import { median } from './stats.js';

/**
 * `--only discover` (issue 46): an estate of scheduled flows served by the simulator over real HTTP, `discover`'s
 * read and analysis against the client's bare read of the same history, the flows found against the estate's truth,
 * and the proposed rules (with `warn_before: auto`) replayed over the weeks after: false missing alerts, and how early
 * the learned warning comes before a late file.
 */

const DAY = 86_400_000;
const MINUTE = 60_000;
const SEED = 46;
/** São Paulo is UTC−3 without DST: local minutes of the day by arithmetic. */
const OFFSET = -3 * 3_600_000;

export interface DiscoverBenchResult {
  flows: number;
  weeks: number;
  transfersRead: number;
  clientRecordsPerSecond: number;
  discoverRecordsPerSecond: number;
  /** discover ÷ client, the median of the rounds' ratios (goal >= 0.8). */
  ratioToClient: number;
  truthRecurring: number;
  found: number;
  precision: number;
  recall: number;
  /** Share of the truth's deadlines proposed between the flow's p95 and p99 + 30 min (goal >= 0.9). */
  deadlinesInRange: number;
  replayDays: number;
  /** Missing alerts for a file that came within its flow's normal spread, per flow per month (goal <= 1). */
  falseMissingPerFlowMonth: number;
  trueMissing: number;
  /** Learned warnings before files that came after their deadline: how long before the deadline (median, minutes; goal >= 30). */
  jeopardyLeadMedianMinutes: number;
  jeopardyOnLate: number;
  /** Learned warnings for files that then came before their deadline, per flow per month (goal <= 1). */
  falseJeopardyPerFlowMonth: number;
}

function localMinute(ms: number): number {
  const local = ms + OFFSET;
  return Math.floor((local - Math.floor(local / DAY) * DAY) / MINUTE);
}

/** Every transfer of the generated history between two instants, in time order (the replay reads the generator directly). */
function* history(generator: HistoryGenerator, from: number, to: number): Generator<Transfer> {
  for (let b = Math.floor(from / MINUTE); b * MINUTE < to; b++) {
    for (const e of generator.bucket(b)) if (e.time >= from && e.time < to) yield transferOf({ ...e.record, DIAS: null }, `${e.time}:${e.seq}`, 'bench');
  }
}

export async function measureDiscover(o: { flows: number; weeks: number; replayWeeks: number; rate: number; rounds: number; now?: number }): Promise<DiscoverBenchResult> {
  // Today's noon by default: the replayed weeks' late files and missed days are those of the estate's dates then.
  const now = Math.floor((o.now ?? Date.now()) / DAY) * DAY + 12 * 3_600_000;
  const until = now - o.replayWeeks * 7 * DAY;
  const since = until - o.weeks * 7 * DAY;
  const historyDays = o.weeks * 7 + o.replayWeeks * 7 + 2;
  const clock = new ManualClock(now);
  const sim = await startSimulator({ estate: o.flows, ratePerMinute: o.rate, historyDays, seed: SEED, clock, cachedMinutes: 64 });
  const source = sourceSchema.parse({ name: 'bench', base_url: sim.url, username: 'demo', password: 'demo' });
  const client = new TransferHistoryClient({ source, logger: silentLogger() });
  const query = { start: since, end: until, limit: 1000, results: 0 as const };

  // The client's bare read, and discover's (the same read into the flow summaries), in turns.
  const clientRates: number[] = [];
  const discoverRates: number[] = [];
  const ratios: number[] = [];
  let summaries = new FlowSummaries();
  let read = 0;
  for (let round = 0; round < o.rounds; round++) {
    let t = performance.now();
    let n = 0;
    for await (const page of client.pages(query)) n += page.transfers.length;
    const clientRate = n / ((performance.now() - t) / 1000);
    summaries = new FlowSummaries();
    t = performance.now();
    read = 0;
    for await (const page of client.pages(query)) {
      for (const tr of page.transfers) summaries.add(tr);
      read += page.transfers.length;
    }
    const report0 = analyse(summaries, since, until, read);
    const discoverRate = read / ((performance.now() - t) / 1000);
    if (report0.flows.length === 0) throw new Error('discover found no flow');
    clientRates.push(clientRate);
    discoverRates.push(discoverRate);
    ratios.push(discoverRate / clientRate);
  }
  await sim.close();
  const report = analyse(summaries, since, until, read);

  // Found against the truth.
  const flows = estateFlows(SEED, o.flows);
  const truth = estateTruth(flows);
  const recurring = truth.filter((t) => t.recurring);
  const foundOf = (t: (typeof truth)[number]) => report.flows.find((f) => f.user === t.user && f.event === t.event && f.pattern.replace(/\?+/g, '*') === t.pattern);
  let matched = 0;
  let deadlines = 0;
  let inRange = 0;
  const hm = (s: string): number => Number(s.slice(0, 2)) * 60 + Number(s.slice(3, 5));
  for (const t of recurring) {
    const f = foundOf(t);
    if (!f) continue;
    matched++;
    t.arrivals.forEach((a, i) => {
      deadlines++;
      const d = f.schedule.times[i];
      if (d !== undefined && hm(d) >= hm(a.p95) && hm(d) <= hm(a.p99) + 30) inRange++;
      else if (process.env['BENCH_DEBUG']) console.error('out of range', t.kind, t.user, t.pattern, d, a, f.occurrences);
    });
  }
  // The base traffic's statements are recurring too (the truth's `weekdays` kind): found, they are right.
  const statementUsers = new Set(['BANK1', 'BANK2', 'BANK3']);
  const estateFound = report.flows.filter((f) => !statementUsers.has(f.user));

  const replay = replayProposal(report, flows, since, until, now, o.rate);
  return {
    flows: o.flows,
    weeks: o.weeks,
    transfersRead: read,
    clientRecordsPerSecond: median(clientRates),
    discoverRecordsPerSecond: median(discoverRates),
    ratioToClient: median(ratios),
    truthRecurring: recurring.length,
    found: estateFound.length,
    precision: estateFound.length === 0 ? 0 : matched / estateFound.length,
    recall: recurring.length === 0 ? 0 : matched / recurring.length,
    deadlinesInRange: deadlines === 0 ? 0 : inRange / deadlines,
    ...replay,
  };
}

function analyse(summaries: FlowSummaries, since: number, until: number, read: number): DiscoverReport {
  return discoverFlows(summaries.all(), {
    since,
    until,
    timezone: ESTATE_TIMEZONE,
    minOccurrences: 8,
    calendars: calendarCandidates({ [ESTATE_CALENDAR_NAME]: ESTATE_CALENDAR }),
    rules: [],
    severalSources: false,
    transfersRead: read,
  });
}

/**
 * The proposed rules, each with `warn_before: auto`, learned on the weeks discover read and replayed minute by
 * minute over the weeks after. A missing alert is false when its file came within its flow's normal spread (the
 * estate's arrivals are normal, clipped at 3 sigma; its planned late outliers and missed days are true alerts).
 */
function replayProposal(report: DiscoverReport, flows: readonly EstateFlow[], since: number, until: number, now: number, rate: number) {
  const parsed = parseRuleFile('proposed.yaml', proposalYaml(report, { unwatchedOnly: true, by: 'bench' }));
  if (parsed.problems.length > 0) throw new Error(`the proposal does not load: ${parsed.problems.map((p) => p.message).join('; ')}`);
  const rules = parsed.rules.map((r) => (r.type === 'missing_file' ? { ...r, warn_before: 'auto' as const } : r)) as RuleDefinition[];
  const calendars = new Map([[ESTATE_CALENDAR_NAME, new BusinessCalendar(ESTATE_CALENDAR)]]);
  const estate = new Estate(SEED, flows);
  const generator = new HistoryGenerator({ seed: SEED, scenario: getScenario('steady'), ratePerMinute: rate, historyStart: since - DAY, estate });
  const logger = silentLogger();

  // Learn each key's usual arrival from the ledger of the weeks read, as the leader does.
  const learnClock = new ManualClock(until);
  const learner = new RuleEngine(rules, { clock: learnClock, logger, sources: ['bench'], keepHistory: true, calendars });
  for (const t of history(generator, since, until)) if (t.result === 'success') learner.observe(t);
  const usual = new UsualArrivals();
  for (const { rule, occurrences } of learner.occurrencesBetween(since, until, { from: since, until })) {
    usual.learn(
      rule,
      [...occurrences].filter((x) => x.final && x.outcome !== 'no_data').sort((a, b) => b.deadline - a.deadline).map((x) => ({ keyText: x.key_text, deadline: x.deadline, arrivedAt: x.arrived_at })),
    );
  }

  // The flow each alert is about: a rule and a user, to the estate flow whose files the rule takes.
  const matchers = rules.map((r) => ({ name: r.name, test: compileMatch(r.match) }));
  const flowOf = new Map<string, EstateFlow>();
  const arrivals = new Map<EstateFlow, number[]>();
  const clock = new ManualClock(until);
  const engine = new RuleEngine(rules, { clock, logger, sources: ['bench'], calendars, usualArrival: (rule, key) => usual.get(rule, key) });
  const store = new AlertStore({ clock, logger, state: new MemoryStateStore() });
  const byUser = new Map<string, EstateFlow[]>();
  for (const f of flows) byUser.set(f.user, [...(byUser.get(f.user) ?? []), f]);
  const warnings: Array<{ flow: EstateFlow | undefined; at: number; deadline: number }> = [];
  const missing: Array<{ flow: EstateFlow | undefined; deadline: number }> = [];
  const transfers = history(generator, until - DAY, now);
  let pending = transfers.next();
  for (let t = until; t <= now; t += MINUTE) {
    while (!pending.done && pending.value.time <= t) {
      const tr = pending.value;
      engine.observe(tr);
      if (tr.result === 'success') {
        for (const f of byUser.get(tr.user) ?? []) {
          if ((f.event === 5 ? 'transmission' : 'reception') !== tr.event) continue;
          for (const m of matchers) if (m.test(tr)) flowOf.set(`${m.name}|${tr.user}`, f);
          if (compileMatch({ file: [f.pattern] })(tr)) arrivals.set(f, [...(arrivals.get(f) ?? []), tr.time]);
        }
      }
      pending = transfers.next();
    }
    clock.set(t);
    const data: DataCompleteness = { completeUntil: () => t, completeFrom: () => until - DAY };
    for (const change of store.apply(engine.evaluate(t, data), t)) {
      if (change.to !== 'firing') continue;
      const labels = change.alert.labels;
      const rule = rules.find((r) => r.name === labels['alertname']);
      const user = labels['user'] ?? rule?.match.user?.[0] ?? '';
      const flow = flowOf.get(`${labels['alertname']}|${user}`);
      const deadline = Number(change.alert.values['deadline_ms']);
      if (labels['phase'] === 'jeopardy') warnings.push({ flow, at: t, deadline });
      else missing.push({ flow, deadline });
    }
  }

  const normalLatest = (f: EstateFlow, deadline: number): number => {
    const d = localMinute(deadline);
    const mean = f.means.reduce((best, m) => (Math.abs(m - d) < Math.abs(best - d) ? m : best), f.means[0] as number);
    return mean + 3 * f.sigma;
  };
  const firstAfter = (f: EstateFlow | undefined, from: number): number | undefined => (f ? (arrivals.get(f) ?? []).find((a) => a > from) : undefined);
  let falseMissing = 0;
  for (const m of missing) {
    const arrived = firstAfter(m.flow, m.deadline - 12 * 3_600_000);
    if (m.flow && arrived !== undefined && arrived - m.deadline < 12 * 3_600_000 && localMinute(arrived) <= normalLatest(m.flow, m.deadline)) falseMissing++;
  }
  const leads: number[] = [];
  let falseWarnings = 0;
  for (const w of warnings) {
    const arrived = firstAfter(w.flow, w.at);
    if (arrived !== undefined && arrived <= w.deadline) falseWarnings++;
    else leads.push((w.deadline - w.at) / MINUTE);
  }
  const proposedFlows = report.flows.length;
  const months = (now - until) / (30.4 * DAY);
  return {
    replayDays: Math.round((now - until) / DAY),
    falseMissingPerFlowMonth: falseMissing / proposedFlows / months,
    trueMissing: missing.length - falseMissing,
    jeopardyLeadMedianMinutes: leads.length > 0 ? median(leads) : 0,
    jeopardyOnLate: leads.length,
    falseJeopardyPerFlowMonth: falseWarnings / proposedFlows / months,
  };
}
