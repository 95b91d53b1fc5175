import { formatDuration } from '../base/duration.js';
import { compileMatch, type TransferMatcher } from '../rules/match.js';
import type { RuleDefinition } from '../rules/registry.js';
import { transferLabel, type LabelName, type Transfer } from '../source/transfer.js';
import { filesOf, type FlowSummary } from './flow-summary.js';
import { MAX_PATTERNS, flowFamilies, type FlowFamily } from './flow-families.js';
import { SteadiestZone, type ZonedFinding } from './steadiest-zone.js';
import { stoppedFlow, type CalendarCandidate, type HolidayCandidates, type LearnedSchedule, type NotRecurringReason } from './flow-schedule.js';
import { shapePattern } from './name-shape.js';

/**
 * From flow summaries to what `discover`, `GET /api/v1/flows` and the `/flows` page show (contract section 13):
 * every recurring flow with its pattern, schedule, evidence, the configured rules that already watch it and the
 * `missing_file` rule proposed for it. The CLI and the daemon give this the same summaries' shape, so they answer
 * the same.
 */

export interface DiscoverOptions {
  since: number;
  until: number;
  /** The default zone of the proposed deadlines. */
  timezone: string;
  /**
   * Other zones a flow's schedule may be learned in, where its arrivals are steadier (contract 13a): UTC and the
   * zones the config already names. Default: UTC.
   */
  zones?: readonly string[];
  minOccurrences: number;
  calendars: readonly CalendarCandidate[];
  /** The holiday library's calendars, for business-day flows no configured calendar fits (contract 13a). */
  holidays?: HolidayCandidates;
  /** The configured rules: those that judge a flow's files are named in its `watched_by`. */
  rules: readonly RuleDefinition[];
  /** Whether more than one source is configured (a proposed rule then matches its source too). */
  severalSources: boolean;
  transfersRead: number;
}

/** A proposed rule, as the rule file holds it. */
export interface ProposedRule {
  name: string;
  type: 'missing_file';
  match: Record<string, string[]>;
  deadline: string;
  timezone: string;
  window: string;
  /** The parts of a delivery always sent in as many parts: all of them by the deadline. */
  min_count?: number;
  calendar?: string;
  for_each?: { label: 'user'; values: string[] };
  severity: 'warning';
}

export interface FlowReport {
  source: string;
  event: string;
  user: string;
  pattern: string;
  /** Every pattern its files come under (one per casing or form in parts no other takes); `pattern` is the first. */
  patterns: string[];
  /** A delivery in parts: as many parts each time (its rule expects them all), or not, and whether some come whole. */
  parts?: { per_delivery: number | null; also_whole: boolean };
  /** The zone of its schedule and deadlines: the report's, or one where its arrivals are steadier. */
  timezone: string;
  /**
   * The holiday library's calendar `schedule.calendar` names when the config lacks it: what to add to the config, and
   * the skipped days that decided it.
   */
  calendar_to_add?: CalendarToAdd;
  schedule: { kind: LearnedSchedule['kind']; weekdays: number[]; calendar: string | null; times: string[]; month_day?: number | 'last' };
  occurrences: number;
  missed: number;
  late: number;
  /**
   * Of the arrivals the deadline was set from; `outliers` (late days past the robust fence, which the deadline does
   * not move for) are counted apart, `latest` is the latest arrival of all.
   */
  arrival: ArrivalFigures;
  /** One per daily arrival (k deadlines a day); `arrival` is the first's. */
  arrivals: ArrivalFigures[];
  first_seen: string;
  last_seen: string;
  /** Successful transfers of the flow in the period. */
  files: number;
  example: string;
  watched_by: string[];
  rule: ProposedRule;
  /** More than one rule when a day's deadlines cannot share a cron minute. */
  rules: ProposedRule[];
  /** The counts behind the proposal, in words (the YAML's comment). */
  evidence: string;
}

export interface ArrivalFigures {
  p50: string;
  p95: string;
  max: string;
  outliers: number;
  latest: string;
}

/** A calendar the config lacks, inferred from the holidays flows skipped (contract 13a). */
export interface CalendarToAdd {
  name: string;
  country: string;
  region?: string;
  /** The config's lines to add, as YAML: `calendars: { de_sn: { holidays: { country: DE, region: SN } } }`. */
  yaml: string;
  /** The skipped days (public holidays of it) that decided it. */
  days: string[];
}

/** A flow that stopped or started in the period (contract 13a). */
export interface FlowChange {
  /** `source/user event pattern`. */
  flow: string;
  change: 'stopped' | 'started';
  /** Stopped: its last arrival; started: its first. */
  since: string;
  /** In words: its schedule and how many of its periods it missed since (stopped). */
  detail: string;
}

/** A flow that looked recurring and was not proposed, with why (contract 13a). */
export interface NotProposed {
  flow: string;
  reason: NotRecurringReason | 'stopped';
  detail: string;
}

export interface DiscoverReport {
  since: string;
  until: string;
  timezone: string;
  transfers_read: number;
  flows: FlowReport[];
  /** The calendars the proposed rules name and the config lacks (inferred from the holidays the flows skipped). */
  calendars_to_add: Array<Omit<CalendarToAdd, 'days'> & { flows: number }>;
  /** Stopped flows first, then those that started, each newest first. */
  changes: FlowChange[];
  not_proposed: NotProposed[];
  not_recurring: { flows: number; transfers: number; reasons: Partial<Record<NotRecurringReason, number>> };
}

/** A flow seen on fewer days than this is traffic, not listed in `not_proposed` (only counted). */
const NOT_PROPOSED_MIN_DAYS = 3;
/** A recurring flow whose first arrival came this long after the period's start has *started* in it. */
const STARTED_AFTER_MS = 7 * 86_400_000;

/** Names of ISO weekdays (1 = Monday … 7 = Sunday), as the schedules' `weekdays` number them. */
export const ISO_WEEKDAY_NAMES: readonly string[] = ['', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
/**
 * Flows whose deadlines differ by more than this are not put in one rule (contract 13a): a group takes its latest
 * member's deadline, and an hour's spread told a member's missing file up to an hour late.
 */
const GROUP_DEADLINE_SPREAD = 15;

/** `HH:MM` of minutes from a local midnight (a night flow's deadline past 24 h is the next day's time). */
export function hhmm(minutes: number): string {
  const m = ((minutes % DAY_MINUTES) + DAY_MINUTES) % DAY_MINUTES;
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

const DAY_MINUTES = 24 * 60;

/** Whether a deadline falls on the day after the flow's own (a night flow's next morning). */
function nextDay(deadline: number): boolean {
  return deadline >= DAY_MINUTES;
}

/** A transfer standing for a flow's files, for the configured rules' matchers. */
function sampleTransfer(f: FlowSummary): Transfer {
  const file = f.sample.file;
  return {
    id: '',
    source: f.source,
    time: 0,
    instance: f.sample.instance,
    user: f.user,
    eventCode: f.event === 'transmission' ? 5 : f.event === 'reception' ? 7 : Number(f.event),
    event: f.event,
    file,
    code: 0,
    result: 'success',
    size: 0,
    message: '',
    tags: '',
    record: {
      DATAHORA: '', INSTANCE: f.sample.instance, USUARIO: f.user, CONEXAO: '', DATAARQUIVO: '', EVENTO: 0, HORAARQUIVO: '', MAXTAMREG: null, NUMREG: null,
      MENSAGEM: '', NOMEARQUIVO: file, TAGS: '', PROCID: null, REDE: '', RESULTADO: 0, TAMARQUIVO: 0, THREADID: null, TIPOREC: '', DIAS: null,
    },
  };
}

/**
 * The configured rules that watch a flow: the missing_file rules whose match (and for_each) take its files. A
 * volume or failure rule over a whole instance judges the files too, but expects none of them by a time: a flow it
 * alone sees is still one nobody would be told is missing.
 */
function watchersOf(f: FlowSummary, watchers: readonly Watcher[]): string[] {
  const t = sampleTransfer(f);
  const names: string[] = [];
  for (const w of watchers) {
    if (!w.matches(t)) continue;
    if (w.forEach && !w.forEach.values.includes(transferLabel(t, w.forEach.label))) continue;
    names.push(w.name);
  }
  return names;
}

/** A configured missing_file rule with its match compiled once (every flow is asked of every rule). */
interface Watcher {
  name: string;
  matches: TransferMatcher;
  forEach: { label: LabelName; values: readonly string[] } | undefined;
}

function watchersFrom(rules: readonly RuleDefinition[]): Watcher[] {
  return rules.flatMap((rule) => (rule.type === 'missing_file' ? [{ name: rule.name, matches: compileMatch(rule.match), forEach: rule.for_each }] : []));
}

function cronWeekdays(iso: readonly number[]): string {
  const days = [...new Set(iso.map((d) => d % 7))].sort((a, b) => a - b);
  if (days.length === 7) return '*';
  const parts: string[] = [];
  for (let i = 0; i < days.length; ) {
    let j = i;
    while (j + 1 < days.length && (days[j + 1] as number) === (days[j] as number) + 1) j++;
    parts.push(j - i >= 2 ? `${days[i]}-${days[j]}` : days.slice(i, j + 1).join(','));
    i = j + 1;
  }
  return parts.join(',');
}

/** The cron of deadlines that share their minute (several hours, one minute). */
function cronOf(deadlines: readonly number[], s: LearnedSchedule): string {
  const minute = (deadlines[0] as number) % 60;
  const hours = deadlines.map((d) => Math.floor(d / 60) % 24).join(',');
  if (s.kind === 'monthly') return `${minute} ${hours} ${s.monthDay === 'last' ? 'L' : String(s.monthDay)} * *`;
  // A night flow's deadline the next morning is on the weekday after each of its days.
  const weekdays = nextDay(deadlines[0] as number) ? s.weekdays.map((d) => (d % 7) + 1) : s.weekdays;
  return `${minute} ${hours} * * ${cronWeekdays(weekdays)}`;
}

/** Words of a pattern's file name, for a rule name: `/in/BANK1/EXTRATO_*.RET` → `ExtratoRet`. */
function nameWords(pattern: string): string {
  const base = pattern.slice(pattern.lastIndexOf('/') + 1);
  const words = base.match(/[A-Za-z]{2,}/g) ?? ['File'];
  return words.map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()).join('');
}

function camel(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase())
    .join('');
}

/** A user's name as a whole path segment of the pattern becomes `*`, so flows of several users share one pattern. */
function userlessPattern(pattern: string, user: string): string {
  return pattern
    .split('/')
    .map((segment) => (segment === user ? '*' : segment))
    .join('/');
}

interface Learned {
  /** The family as one flow (its members' days together). */
  flow: FlowSummary;
  family: FlowFamily;
  /** Its patterns: one per member no other takes (a casing, a form in parts); `pattern` is the first. */
  patterns: string[];
  /** Members past MAX_PATTERNS whose files no pattern takes. */
  patternsLeft?: number;
  schedule: LearnedSchedule;
  /** The zone it was learned in, and the default's spread when that was another. */
  zone: Pick<ZonedFinding, 'timezone' | 'against'>;
  pattern: string;
  watchedBy: string[];
  files: number;
}

function describeSchedule(s: LearnedSchedule): string {
  const days = s.weekdays.map((d) => ISO_WEEKDAY_NAMES[d]).join(', ');
  if (s.kind === 'monthly') return s.monthDay === 'last' ? 'the last day of each month' : `day ${s.monthDay} of each month`;
  const times = s.deadlines.length > 1 ? `${s.deadlines.length} times a day, ` : '';
  if (s.calendar !== null) {
    const e = s.calendarEvidence;
    const holidays = e && e.holidays > 0 ? `skipped ${e.skipped} of its ${e.holidays} days off in the period` : 'no day off of it in the period';
    const i = s.inferredCalendar;
    const inferred = i
      ? `; not configured: the public holidays of ${i.country}${i.region ? `-${i.region}` : ''} in the holiday library, on the days it skipped (${i.days.join(', ')})${i.alike.length > 0 ? `, which ${i.alike.join(', ')} of other zones hold too` : ''}; add to the config: ${calendarToAdd(s.calendar, i).yaml}`
      : '';
    return `${times}business days of calendar ${s.calendar} (${days}; ${holidays}${inferred})`;
  }
  if (s.ambiguousCalendars) return `${times}${days} (the days it skipped are public holidays of ${s.ambiguousCalendars.join(', ')} alike: no calendar proposed)`;
  if (s.kind === 'weekly') return `${times}weekly on ${days}`;
  return s.weekdays.length === 7 ? `${times}every day` : `${times}${days}`;
}

function evidenceOf(l: Learned): string {
  const s = l.schedule;
  const timezone = l.zone.timezone;
  const against = l.zone.against;
  const night = s.dayStart > 0 ? `; a night flow: its day runs from ${hhmm(s.dayStart)} to ${hhmm(s.dayStart)} the next day${s.deadlines.some(nextDay) ? `, its deadline is the next morning${s.calendar !== null ? ` (calendar ${s.calendar} left out of the rule: it would excuse the morning after each holiday)` : ''}` : ''}` : '';
  const parts = l.family.parts
    ? `; in parts${l.family.parts.perDelivery !== undefined ? ` (${l.family.parts.perDelivery} each time)` : ''}${l.family.parts.alsoWhole ? ', whole on other days' : ''}: a delivery counts once, at its last part`
    : '';
  const casings = l.family.members.length > 1 && !l.family.parts ? `; its names change case: ${l.patterns.length} pattern${l.patterns.length === 1 ? '' : 's'}` : '';
  const leftOut = l.patternsLeft ? `; ${l.patternsLeft} more name form(s) no pattern takes` : '';
  const clock = against ? `; clock ${timezone}: its arrivals vary ${minutesText(s.spreadMinutes)} there, ${minutesText(against.spreadMinutes)} in ${against.timezone}` : '';
  const arrivals = s.arrivals.map((a) => `p50 ${hhmm(a.p50)}, p95 ${hhmm(a.p95)}, max ${hhmm(a.max)}${a.outliers > 0 ? ` (${a.outliers} late outlier${a.outliers === 1 ? '' : 's'} left out, latest ${hhmm(a.latest)})` : ''}`).join('; ');
  const off = s.offSchedule > 0 ? `, ${s.offSchedule} days outside the schedule` : '';
  return [
    `${l.flow.user} ${l.flow.event} ${l.patterns.join(' | ')}: ${describeSchedule(s)}${parts}${casings}${leftOut}`,
    `${s.occurrences} occurrences, ${s.missed} missed, ${s.late} late after the proposed deadline${off}; ${l.files} files`,
    `arrival (${timezone}) ${arrivals}; first seen ${new Date(s.firstSeen).toISOString()}, last seen ${new Date(s.lastSeen).toISOString()}${clock}${night}`,
  ].join('\n');
}

function minutesText(spread: number): string {
  return Number.isFinite(spread) ? `${Math.round(spread)} min on average` : 'too much for a schedule';
}

function uniqueName(base: string, taken: Set<string>): string {
  const clean = /^[A-Za-z_]/.test(base) ? base : `F${base}`;
  let name = clean;
  for (let i = 2; taken.has(name); i++) name = `${clean}_${i}`;
  taken.add(name);
  return name;
}

function calendarToAdd(name: string, c: NonNullable<LearnedSchedule['inferredCalendar']>): CalendarToAdd {
  const holidays = `{ country: ${c.country}${c.region ? `, region: ${c.region}` : ''} }`;
  return { name, country: c.country, ...(c.region ? { region: c.region } : {}), yaml: `calendars: { ${name}: { holidays: ${holidays} } }`, days: c.days };
}

function calendarsToAdd(flows: readonly FlowReport[]): DiscoverReport['calendars_to_add'] {
  const byName = new Map<string, DiscoverReport['calendars_to_add'][number]>();
  for (const f of flows) {
    const c = f.calendar_to_add;
    if (!c) continue;
    const seen = byName.get(c.name);
    if (seen) seen.flows++;
    else byName.set(c.name, { name: c.name, country: c.country, ...(c.region ? { region: c.region } : {}), yaml: c.yaml, flows: 1 });
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Builds the report: schedules, patterns clear of the other flows' files, watchers, and rules grouped by shape. */
export function discoverFlows(summaries: readonly FlowSummary[], o: DiscoverOptions): DiscoverReport {
  const learned: Learned[] = [];
  const reasons: Partial<Record<NotRecurringReason, number>> = {};
  let notRecurringTransfers = 0;
  const watchers = watchersFrom(o.rules);
  const changes: FlowChange[] = [];
  const notProposed: NotProposed[] = [];
  const labelOf = (f: FlowSummary): string => `${f.source}/${f.user} ${f.event} ${shapePattern(f.pieces, f.runs)}`;
  const zones = new SteadiestZone(o, o.zones ?? ['UTC']);
  const families = flowFamilies(summaries);
  const filesOfFamily = (family: FlowFamily): number => family.members.reduce((n, m) => n + filesOf(m), 0);
  for (const family of families) {
    const flow = family.summary;
    const days = [...flow.days.values()];
    // Recurring until it went silent for three of its periods: said, never proposed (its rule would fire at once).
    const stopped = stoppedFlow(days, o);
    if (stopped) {
      const detail = `${describeSchedule(stopped.schedule)}; ${stopped.schedule.occurrences} occurrences, then none in ${stopped.missedPeriods} scheduled periods`;
      changes.push({ flow: labelOf(flow), change: 'stopped', since: new Date(stopped.since).toISOString(), detail });
      notProposed.push({ flow: labelOf(flow), reason: 'stopped', detail: `no file since ${new Date(stopped.since).toISOString()}: ${detail}` });
      reasons.irregular_days = (reasons.irregular_days ?? 0) + 1;
      notRecurringTransfers += filesOfFamily(family);
      continue;
    }
    const { finding, ...zone } = zones.learn(days);
    if (!finding.recurring) {
      reasons[finding.reason] = (reasons[finding.reason] ?? 0) + 1;
      notRecurringTransfers += filesOfFamily(family);
      if (days.length >= NOT_PROPOSED_MIN_DAYS) notProposed.push({ flow: labelOf(flow), reason: finding.reason, detail: finding.detail });
      continue;
    }
    if (finding.schedule.firstSeen - o.since >= STARTED_AFTER_MS) {
      changes.push({ flow: labelOf(flow), change: 'started', since: new Date(finding.schedule.firstSeen).toISOString(), detail: `${describeSchedule(finding.schedule)}; ${finding.schedule.occurrences} occurrences since` });
    }
    learned.push({ flow, family, schedule: finding.schedule, zone, pattern: '', patterns: [], watchedBy: [...new Set(family.members.flatMap((m) => watchersOf(m, watchers)))], files: filesOfFamily(family) });
  }

  // A pattern matches no other flow's files of the same source, event and user: where `*` would, runs of one
  // length are written as `?`s. A family writes one pattern per member no earlier pattern takes (a casing, a form
  // in parts), at most MAX_PATTERNS.
  const neighbours = new Map<string, FlowSummary[]>();
  for (const f of summaries) {
    const key = JSON.stringify([f.source, f.event, f.user]);
    neighbours.set(key, [...(neighbours.get(key) ?? []), f]);
  }
  for (const l of learned) {
    const others = (neighbours.get(JSON.stringify([l.flow.source, l.flow.event, l.flow.user])) ?? []).filter((f) => !l.family.members.includes(f));
    const patterns: string[] = [];
    let left = 0;
    for (const member of l.family.members) {
      if (patterns.length > 0 && compileMatch({ file: patterns })(sampleTransfer(member))) continue;
      if (patterns.length >= MAX_PATTERNS) {
        left++;
        continue;
      }
      const loose = shapePattern(member.pieces, member.runs);
      const matches = compileMatch({ file: [loose] });
      patterns.push(others.some((f) => matches(sampleTransfer(f))) ? shapePattern(member.pieces, member.runs, true) : loose);
    }
    l.patterns = patterns;
    l.pattern = patterns[0] as string;
    l.patternsLeft = left;
  }

  const taken = new Set(o.rules.map((r) => r.name));
  const rulesOf = groupRules(learned, o, taken);
  const flows = learned.map((l): FlowReport => {
    const s = l.schedule;
    const rules = rulesOf.get(l) ?? [];
    const stat = (a: (typeof s.arrivals)[number]): ArrivalFigures => ({ p50: hhmm(a.p50), p95: hhmm(a.p95), max: hhmm(a.max), outliers: a.outliers, latest: hhmm(a.latest) });
    return {
      source: l.flow.source,
      event: l.flow.event,
      user: l.flow.user,
      pattern: l.pattern,
      patterns: l.patterns,
      ...(s.inferredCalendar && s.calendar !== null ? { calendar_to_add: calendarToAdd(s.calendar, s.inferredCalendar) } : {}),
      ...(l.family.parts ? { parts: { per_delivery: l.family.parts.perDelivery ?? null, also_whole: l.family.parts.alsoWhole } } : {}),
      timezone: l.zone.timezone,
      schedule: {
        kind: s.kind,
        weekdays: s.weekdays,
        calendar: s.calendar,
        times: s.deadlines.map(hhmm),
        ...(s.monthDay !== undefined ? { month_day: s.monthDay } : {}),
      },
      occurrences: s.occurrences,
      missed: s.missed,
      late: s.late,
      arrival: stat(s.arrivals[0] as (typeof s.arrivals)[number]),
      arrivals: s.arrivals.map(stat),
      first_seen: new Date(s.firstSeen).toISOString(),
      last_seen: new Date(s.lastSeen).toISOString(),
      files: l.files,
      example: l.flow.sample.file,
      watched_by: l.watchedBy,
      rule: rules[0] as ProposedRule,
      rules,
      evidence: evidenceOf(l),
    };
  });
  flows.sort((a, b) => a.source.localeCompare(b.source) || a.user.localeCompare(b.user) || a.event.localeCompare(b.event) || a.pattern.localeCompare(b.pattern));
  return {
    since: new Date(o.since).toISOString(),
    until: new Date(o.until).toISOString(),
    timezone: o.timezone,
    transfers_read: o.transfersRead,
    flows,
    changes: changes.sort((a, b) => (a.change === b.change ? b.since.localeCompare(a.since) : a.change === 'stopped' ? -1 : 1)),
    calendars_to_add: calendarsToAdd(flows),
    not_proposed: notProposed.sort((a, b) => a.flow.localeCompare(b.flow)),
    not_recurring: { flows: summaries.length - learned.length, transfers: notRecurringTransfers, reasons },
  };
}

/**
 * One rule per group of flows with the same source, event, shape (the user's name aside), schedule and number of
 * deadlines, watched alike: `for_each: user` over the group, its deadlines the latest of the group's (each flow's
 * own stay in its report). Flows whose deadlines are more than 15 minutes apart are not grouped.
 */
function groupRules(learned: readonly Learned[], o: DiscoverOptions, taken: Set<string>): Map<Learned, ProposedRule[]> {
  const groups = new Map<string, Learned[]>();
  for (const l of learned) {
    const s = l.schedule;
    const key = JSON.stringify([l.flow.source, l.flow.event, l.patterns.map((p) => userlessPattern(p, l.flow.user)), minCountOf(l) ?? 1, l.zone.timezone, s.kind, s.weekdays, s.calendar, s.monthDay ?? null, s.deadlines.length, l.watchedBy.length > 0]);
    groups.set(key, [...(groups.get(key) ?? []), l]);
  }
  const out = new Map<Learned, ProposedRule[]>();
  const ordered = [...groups.values()].sort((a, b) => (a[0] as Learned).pattern.localeCompare((b[0] as Learned).pattern));
  for (const group of ordered) {
    // Split where the first deadlines spread more than GROUP_DEADLINE_SPREAD.
    const byDeadline = [...group].sort((a, b) => (a.schedule.deadlines[0] as number) - (b.schedule.deadlines[0] as number));
    let chunk: Learned[] = [];
    const chunks: Learned[][] = [];
    for (const l of byDeadline) {
      const first = chunk[0];
      if (first && (l.schedule.deadlines[0] as number) - (first.schedule.deadlines[0] as number) > GROUP_DEADLINE_SPREAD) {
        chunks.push(chunk);
        chunk = [];
      }
      chunk.push(l);
    }
    if (chunk.length > 0) chunks.push(chunk);
    for (const members of chunks) {
      const rules = rulesFor(members, o, taken);
      for (const m of members) out.set(m, rules);
    }
  }
  return out;
}

/** A delivery always in N parts, never whole: its rule expects all N by the deadline. */
function minCountOf(l: Learned): number | undefined {
  const parts = l.family.parts;
  return parts && !parts.alsoWhole && parts.perDelivery !== undefined && parts.perDelivery > 1 ? parts.perDelivery : undefined;
}

function rulesFor(members: readonly Learned[], o: DiscoverOptions, taken: Set<string>): ProposedRule[] {
  const lead = members[0] as Learned;
  const s = lead.schedule;
  const several = members.length > 1;
  const users = [...new Set(members.map((m) => m.flow.user))].sort();
  const deadlines = s.deadlines.map((_, i) => Math.max(...members.map((m) => m.schedule.deadlines[i] as number)));
  const window = Math.max(...members.map((m) => m.schedule.windowMinutes));
  const userless = (m: Learned): string[] => m.patterns.map((p) => userlessPattern(p, m.flow.user));
  const pattern = several ? (userless(lead)[0] as string) : lead.pattern;
  const patterns = !several ? lead.patterns : members.some((m) => userless(m).join('\n') !== userless(lead).join('\n')) ? [...new Set(members.flatMap((m) => m.patterns))] : userless(lead);
  const minCount = minCountOf(lead);
  const match: Record<string, string[]> = {
    ...(o.severalSources ? { source: [lead.flow.source] } : {}),
    user: users,
    event: [lead.flow.event],
    file: patterns,
  };
  const base = several ? `Expected${nameWords(pattern)}` : `Expected${camel(lead.flow.user)}${nameWords(pattern)}`;
  // One cron per rule: its deadlines share a minute, and a day (a night flow's next-morning deadline has its own).
  const sameCron = new Set(deadlines.map((d) => `${d % 60} ${nextDay(d)}`)).size === 1;
  const sets = sameCron ? [deadlines] : deadlines.map((d) => [d]);
  return sets.map((times) => ({
    name: uniqueName(sets.length > 1 ? `${base}_${hhmm(times[0] as number).replace(':', '')}` : base, taken),
    type: 'missing_file',
    match,
    deadline: cronOf(times, s),
    timezone: lead.zone.timezone,
    window: formatDuration(window * 60_000),
    ...(minCount !== undefined ? { min_count: minCount } : {}),
    // A calendar judges the deadline's own date: a night flow's next-morning deadline would be excused the day after
    // each holiday instead of on it. Its days off are in the evidence; the rule keeps its weekdays only.
    ...(s.calendar !== null && !times.some(nextDay) ? { calendar: s.calendar } : {}),
    ...(several ? { for_each: { label: 'user' as const, values: users } } : {}),
    severity: 'warning',
  }));
}
