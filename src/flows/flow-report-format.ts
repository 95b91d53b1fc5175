import { Document, isMap, isScalar, isSeq } from 'yaml';
import { csvLine } from '../base/csv.js';
import { textTable } from '../base/text-table.js';
import { ISO_WEEKDAY_NAMES, type DiscoverReport, type FlowReport, type ProposedRule } from './discover-flows.js';

/**
 * The report as people and tools take it: a rule file to review (each rule under the evidence it was proposed on),
 * a table, CSV. JSON is the report itself.
 */


/**
 * Control characters (a tab, a carriage return in a file name) and bidirectional controls: written raw, a tab made
 * the rule file unreadable to other YAML parsers (PyYAML) and an override showed a name reversed.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSAFE_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSAFE_TEXT_ALL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const BIDI_ALL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A comment's lines, each character of UNSAFE_TEXT (and a tab) written as its escape. */
function commentLines(text: string): string {
  return text
    .split('\n')
    .map((l) => ` ${l.replace(/\t/g, '\\t').replace(UNSAFE_TEXT_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}`)
    .join('\n');
}

/** Every string scalar holding a tab or an unsafe character double-quoted, where YAML escapes it. */
function quoteUnsafe(node: unknown): void {
  if (isScalar(node)) {
    if (typeof node.value === 'string' && (node.value.includes('\t') || UNSAFE_TEXT.test(node.value))) node.type = 'QUOTE_DOUBLE';
  } else if (isMap(node) || isSeq(node)) {
    for (const item of node.items) {
      if (isMap(node)) {
        const pair = item as { key: unknown; value: unknown };
        quoteUnsafe(pair.key);
        quoteUnsafe(pair.value);
      } else quoteUnsafe(item);
    }
  }
}

/**
 * The rule file of the proposed rules: one per rule (flows grouped in one rule share it), the flows' evidence as
 * its comment. With `unwatchedOnly` (the daemon's `/proposal`, and discover's YAML) the flows some configured rule
 * already watches are named in the header, not proposed again.
 */
export function proposalYaml(report: DiscoverReport, o: { unwatchedOnly: boolean; by: string }): string {
  const proposed = report.flows.filter((f) => !o.unwatchedOnly || f.watched_by.length === 0);
  const watched = report.flows.filter((f) => f.watched_by.length > 0);
  const rules = new Map<string, { rule: ProposedRule; flows: FlowReport[] }>();
  for (const f of proposed) {
    for (const rule of f.rules) {
      const entry = rules.get(rule.name);
      if (entry) entry.flows.push(f);
      else rules.set(rule.name, { rule, flows: [f] });
    }
  }
  const doc = new Document({ rules: [...rules.values()].map((r) => r.rule) }, { aliasDuplicateObjects: false });
  const header = [
    `Proposed by ${o.by} from the successful transfers between ${report.since} and ${report.until}`,
    `(${report.transfers_read} read; times in ${report.timezone} unless a rule names another). Review every rule before use: the evidence of each`,
    `is the comment above it. ${report.flows.length} recurring flows, ${rules.size} rules proposed, ${watched.length} flows already watched;`,
    `${report.not_recurring.flows} flows not recurring (${report.not_recurring.transfers} transfers) are not proposed.`,
  ];
  const toAdd = report.calendars_to_add.filter((c) => proposed.some((f) => f.calendar_to_add?.name === c.name));
  if (toAdd.length > 0) {
    header.push('', 'These rules name calendars the config lacks, inferred from the public holidays the flows skipped; add them', 'to the config (top-level calendars:) before loading the rules:');
    for (const c of toAdd) header.push(`  ${c.yaml}    # ${c.flows} flow${c.flows === 1 ? '' : 's'}`);
  }
  if (o.unwatchedOnly && watched.length > 0) {
    header.push('', 'Already watched:');
    for (const f of watched) header.push(`  ${f.user} ${f.event} ${f.pattern}: ${f.watched_by.join(', ')}`);
  }
  doc.commentBefore = commentLines(header.join('\n'));
  const seq = doc.get('rules', true);
  if (isSeq(seq)) {
    const entries = [...rules.values()];
    seq.items.forEach((item, i) => {
      const entry = entries[i];
      if (!entry || !isMap(item)) return;
      item.commentBefore = commentLines(entry.flows.map((f) => f.evidence).join('\n'));
      // Lists of values on one line, as rule files are written by hand.
      for (const pair of item.items) {
        const value = pair.value;
        if (isMap(value)) for (const inner of value.items) if (isSeq(inner.value)) inner.value.flow = true;
        // A cron starts with a digit or `*`: quoted, it can never be read as an alias.
        if (isScalar(pair.key) && pair.key.value === 'deadline' && isScalar(value)) value.type = 'QUOTE_DOUBLE';
      }
    });
  }
  quoteUnsafe(doc.contents);
  // The yaml package escapes control characters in double quotes, not the bidirectional ones: they are, here (only
  // double-quoted scalars and the escaped comments can hold them).
  return doc.toString({ lineWidth: 0 }).replace(BIDI_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function scheduleText(f: FlowReport): string {
  const s = f.schedule;
  if (s.kind === 'monthly') return s.month_day === 'last' ? 'monthly, last day' : `monthly, day ${s.month_day}`;
  const days = s.weekdays.length === 7 ? 'every day' : s.weekdays.map((d) => ISO_WEEKDAY_NAMES[d]).join(',');
  return s.calendar !== null ? `${days} (${s.calendar})` : s.kind === 'weekly' ? `weekly ${days}` : days;
}

export function flowTable(report: DiscoverReport): string {
  const header = ['USER', 'EVENT', 'PATTERN', 'SCHEDULE', 'DEADLINE', 'OCC', 'MISSED', 'LATE', 'P50', 'P95', 'WATCHED BY'];
  const rows = report.flows.map((f) => [
    f.user,
    f.event,
    f.pattern,
    scheduleText(f),
    f.timezone === report.timezone ? f.schedule.times.join(',') : `${f.schedule.times.join(',')} ${f.timezone}`,
    String(f.occurrences),
    String(f.missed),
    String(f.late),
    f.arrival.p50,
    f.arrival.p95,
    f.watched_by.length > 0 ? f.watched_by.join(',') : '-',
  ]);
  const reasons = Object.entries(report.not_recurring.reasons)
    .map(([r, n]) => `${n} ${r.replace(/_/g, ' ')}`)
    .join(', ');
  const summary = `${report.flows.length} recurring flows (times in ${report.timezone}); ${report.not_recurring.flows} not recurring (${report.not_recurring.transfers} transfers${reasons ? `: ${reasons}` : ''}); ${report.transfers_read} transfers read\n`;
  return rows.length === 0 ? summary : `${textTable(header, rows)}\n\n${summary}`;
}

export function flowCsv(report: DiscoverReport): string {
  const header = ['source', 'event', 'user', 'pattern', 'kind', 'weekdays', 'calendar', 'times', 'timezone', 'occurrences', 'missed', 'late', 'p50', 'p95', 'max', 'first_seen', 'last_seen', 'watched_by', 'rule'];
  const rows = report.flows.map((f) =>
    csvLine([
      f.source, f.event, f.user, f.pattern, f.schedule.kind, f.schedule.weekdays.join(' '), f.schedule.calendar ?? '', f.schedule.times.join(' '), f.timezone, f.occurrences, f.missed, f.late,
      f.arrival.p50, f.arrival.p95, f.arrival.max, f.first_seen, f.last_seen, f.watched_by.join(' '), f.rule.name,
    ]),
  );
  return [csvLine(header), ...rows].join('');
}
