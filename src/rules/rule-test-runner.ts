import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { z } from 'zod';
import type { Alert } from '../alerts/alert.js';
import { AlertStore } from '../alerts/alert-store.js';
import { parseDuration } from '../base/duration.js';
import type { Problem } from '../base/problem.js';
import { timeZone } from '../base/schema-helpers.js';
import { eventName, type ServiceRecord, type Transfer } from '../source/transfer.js';
import { MemoryStateStore } from '../state/state-store.js';
import { ManualClock } from '../util/clock.js';
import { errorMessage, TransferWatchError } from '../util/errors.js';
import { silentLogger } from '../util/logger.js';
import { issueProblems, loadRuleFiles } from './load-rules.js';
import { RuleEngine } from './rule-engine.js';
import { parseYamlWithPositions } from './yaml-positions.js';

/**
 * Offline rule unit tests in the spirit of `promtool test rules`: rule files, input transfers at times
 * relative to a start (or absolute), evaluation on a fake clock, expected alerts at given times.
 * The format is documented in docs/rules.md.
 */

const scalar = z.union([z.string(), z.number()]).transform(String);
/** `5m` (offset from start), `0`, or an absolute ISO 8601 time. */
const timeSpec = z.union([z.string(), z.number()]).transform(String);

const transferInput = z.strictObject({
  time: timeSpec,
  source: z.string().optional(),
  mft_instance: z.string().default('PROD01'),
  user: z.string().default('USER'),
  event: scalar.default('reception'),
  file: z.string().default('FILE.TXT'),
  code: z.number().int().default(0),
  message: z.string().default(''),
  size: z.number().int().min(0).default(0),
});

const expectedAlert = z.strictObject({
  exp_labels: z.record(z.string(), scalar).default({}),
  exp_state: z.enum(['pending', 'firing', 'resolved']).default('firing'),
  exp_annotations: z.record(z.string(), z.string()).optional(),
});

const ruleTest = z.strictObject({
  eval_time: timeSpec,
  alertname: z.string().min(1),
  exp_alerts: z.array(expectedAlert).default([]),
});

const testCase = z.strictObject({
  name: z.string().min(1),
  start: z.string().min(1),
  input_transfers: z.array(transferInput).default([]),
  data_complete_until: timeSpec.optional(),
  alert_rule_test: z.array(ruleTest).default([]),
});

export const ruleTestFileSchema = z.strictObject({
  rule_files: z.array(z.string().min(1)).min(1),
  evaluation_timezone: timeZone().default('UTC'),
  evaluation_interval: z.string().default('1m'),
  sources: z.array(z.string().min(1)).optional(),
  tests: z.array(testCase).min(1),
});
type RuleTestFile = z.output<typeof ruleTestFileSchema>;
type TestCase = RuleTestFile['tests'][number];

export interface RuleTestResult {
  name: string;
  passed: boolean;
  /** Readable explanations of each mismatch (expected vs got). */
  failures: string[];
}

export interface RuleTestFileResult {
  file: string;
  problems: Problem[];
  results: RuleTestResult[];
}

const ABSOLUTE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** An ISO time; without a zone it is read in `zone` (two passes settle the zone's offset at that instant). */
function parseAbsolute(text: string, zone: string): number {
  if (!ABSOLUTE.test(text)) throw new TransferWatchError('invalid_time', `invalid time "${text}" (use an offset like 5m or ISO 8601)`);
  if (/(Z|[+-]\d{2}:?\d{2})$/.test(text)) return Date.parse(text);
  const asUtc = Date.parse(`${text}Z`);
  const offsetAt = (ms: number) => {
    const name = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })
      .formatToParts(new Date(ms))
      .find((p) => p.type === 'timeZoneName')?.value;
    const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name ?? '');
    return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000 : 0;
  };
  const first = asUtc - offsetAt(asUtc);
  return asUtc - offsetAt(first);
}

function parseTime(text: string, start: number, zone: string): number {
  if (/^\d/.test(text) && !text.includes('T')) return start + parseDuration(text);
  return parseAbsolute(text, zone);
}

function toTransfer(input: z.output<typeof transferInput>, time: number, source: string): Transfer {
  const eventCode = input.event === 'reception' ? 7 : input.event === 'transmission' ? 5 : Number(input.event);
  const record: ServiceRecord = {
    DATAHORA: new Date(time).toISOString(),
    INSTANCE: input.mft_instance,
    USUARIO: input.user,
    CONEXAO: '',
    DATAARQUIVO: '',
    EVENTO: eventCode,
    HORAARQUIVO: '',
    MAXTAMREG: null,
    NUMREG: null,
    MENSAGEM: input.message,
    NOMEARQUIVO: input.file,
    TAGS: '',
    PROCID: null,
    REDE: '',
    RESULTADO: input.code,
    TAMARQUIVO: input.size,
    THREADID: null,
    TIPOREC: '',
    DIAS: null,
  };
  const id = createHash('sha256').update(JSON.stringify([source, record])).digest('hex').slice(0, 32);
  return {
    id,
    source,
    time,
    instance: input.mft_instance,
    user: input.user,
    eventCode,
    event: eventName(eventCode),
    file: input.file,
    code: input.code,
    result: input.code === 0 ? 'success' : 'error',
    size: input.size,
    message: input.message,
    tags: '',
    record,
  };
}

function describe(a: { labels: Record<string, string>; state: string; annotations?: Record<string, string> }): string {
  return stringify({ labels: a.labels, state: a.state, ...(a.annotations ? { annotations: a.annotations } : {}) }, { lineWidth: 0 })
    .trimEnd()
    .split('\n')
    .join('\n      ');
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

function withoutAlertname(labels: Record<string, string>): Record<string, string> {
  const { alertname: _alertname, ...rest } = labels;
  return rest;
}

/** Compare what the store holds for one alertname with what the test expects. */
function compare(alertname: string, at: string, expected: z.output<typeof expectedAlert>[], alerts: Alert[]): string[] {
  const got = alerts.filter((a) => a.labels['alertname'] === alertname).map((a) => ({ ...a, labels: withoutAlertname(a.labels) }));
  const unmatched = new Set(got.filter((a) => a.state !== 'resolved'));
  const problems: string[] = [];
  for (const exp of expected) {
    const candidates = got.filter((a) => a.state === exp.exp_state && sameLabels(a.labels, exp.exp_labels));
    const hit = candidates.find((a) =>
      Object.entries(exp.exp_annotations ?? {}).every(([k, v]) => a.annotations[k] === v),
    );
    if (hit) {
      unmatched.delete(hit);
      continue;
    }
    const near = candidates[0] ?? got.find((a) => sameLabels(a.labels, exp.exp_labels));
    problems.push(
      `at ${at}, ${alertname}:\n    expected:\n      ${describe({ labels: exp.exp_labels, state: exp.exp_state, ...(exp.exp_annotations ? { annotations: exp.exp_annotations } : {}) })}\n    got:\n      ${near ? describe(near) : got.length === 0 ? '(no alerts)' : got.map((g) => describe(g)).join('\n      ---\n      ')}`,
    );
    if (near) unmatched.delete(near);
  }
  for (const extra of unmatched) {
    problems.push(`at ${at}, ${alertname}: unexpected ${extra.state} alert:\n      ${describe(extra)}`);
  }
  return problems;
}

async function runCase(rulesFromFiles: Awaited<ReturnType<typeof loadRuleFiles>>['rules'], file: RuleTestFile, tc: TestCase): Promise<RuleTestResult> {
  const zone = file.evaluation_timezone;
  const failures: string[] = [];
  try {
    const start = parseAbsolute(tc.start, zone);
    const interval = parseDuration(file.evaluation_interval);
    if (interval <= 0) throw new TransferWatchError('invalid_interval', 'evaluation_interval must be greater than 0');
    const inputSources = tc.input_transfers.map((t) => t.source).filter((s): s is string => s !== undefined);
    const sources = file.sources ?? (inputSources.length > 0 ? [...new Set(inputSources)] : ['test']);
    const transfers = tc.input_transfers
      .map((t) => toTransfer(t, parseTime(t.time, start, zone), t.source ?? (sources[0] as string)))
      .sort((a, b) => a.time - b.time);
    const checks = tc.alert_rule_test
      .map((c) => ({ ...c, at: parseTime(c.eval_time, start, zone) }))
      .sort((a, b) => a.at - b.at);
    const completeCap = tc.data_complete_until === undefined ? undefined : parseTime(tc.data_complete_until, start, zone);
    const last = checks.at(-1)?.at ?? start;
    const steps = new Set<number>();
    for (let t = start; t <= last; t += interval) steps.add(t);
    for (const c of checks) steps.add(c.at);

    const clock = new ManualClock(start);
    const logger = silentLogger();
    const engine = new RuleEngine(rulesFromFiles, { clock, logger, sources });
    const store = new AlertStore({ clock, logger, state: new MemoryStateStore() });
    let next = 0;
    for (const now of [...steps].sort((a, b) => a - b)) {
      clock.set(now);
      const complete = completeCap === undefined ? now : Math.min(now, completeCap);
      // The poller hands over what it has read completely; later records wait for the next step.
      while (next < transfers.length && (transfers[next] as Transfer).time <= complete) engine.observe(transfers[next++] as Transfer);
      store.apply(engine.evaluate(now, { completeUntil: () => complete, completeFrom: () => start }), now);
      for (const c of checks.filter((x) => x.at === now)) failures.push(...compare(c.alertname, c.eval_time, c.exp_alerts, store.alerts()));
    }
  } catch (err) {
    failures.push(`error: ${errorMessage(err)}`);
  }
  return { name: tc.name, passed: failures.length === 0, failures };
}

/** Run one test file. Unreadable files throw (usage error); invalid content comes back as problems. */
export async function runRuleTestFile(file: string): Promise<RuleTestFileResult> {
  const text = await readFile(file, 'utf8');
  const y = parseYamlWithPositions(file, text);
  if (y.problems.length > 0) return { file, problems: y.problems, results: [] };
  const parsed = ruleTestFileSchema.safeParse(y.doc.toJS() ?? {});
  if (!parsed.success) return { file, problems: issueProblems(y, [], parsed.error.issues, ruleTestFileSchema), results: [] };
  const loaded = await loadRuleFiles(parsed.data.rule_files, path.dirname(path.resolve(file)));
  const problems = [...loaded.problems];
  if (loaded.files.length === 0) problems.push({ file, line: 1, col: 1, message: `rule_files matched no file: ${parsed.data.rule_files.join(', ')}` });
  if (problems.length > 0) return { file, problems, results: [] };
  const results: RuleTestResult[] = [];
  for (const tc of parsed.data.tests) results.push(await runCase(loaded.rules, parsed.data, tc));
  return { file, problems, results };
}
