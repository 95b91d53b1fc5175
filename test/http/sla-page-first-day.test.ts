import type { IncomingMessage } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { slaPage } from '../../src/http/status-page/sla-page-handler.js';
import { parseRuleFile } from '../../src/rules/load-rules.js';
import { dueOfRule } from '../../src/rules/due-deadlines.js';
import { ledgerLines } from '../../src/rules/ledger-lines.js';
import type { OccurrenceRecord } from '../../src/sla/occurrence.js';
import type { HistoryStore } from '../../src/history/history-store.js';
import { HistoryBackend } from '../helpers/history-backends.js';

/**
 * `/sla` on the first day of a month (issue 55), on an injected clock: before the month's first deadline every line the
 * rules judge is listed with its days not due, the previous month one click away; after it, the day's outcomes. A rule
 * added mid-month marks its days before `monitored_from` as not monitored.
 */

const RULES = `
rules:
  - name: Statement
    type: missing_file
    match: { file: ["EXT_*.RET"] }
    for_each: { label: user, values: [BANK1, BANK2] }
    deadline: "0 9 * * *"
    timezone: UTC
    window: 1d
    severity: warning
    sla: { objective: 0.9 }
  - name: NewFeed
    type: missing_file
    match: { file: ["FEED_*.CSV"] }
    deadline: "0 12 * * *"
    timezone: UTC
    window: 1d
    severity: warning
`;

function occurrence(rule: string, user: string | undefined, date: string, hour: number, outcome: OccurrenceRecord['outcome']): OccurrenceRecord {
  const deadline = Date.parse(`${date}T${String(hour).padStart(2, '0')}:00:00Z`);
  const key: Record<string, string> = user ? { user } : {};
  const keyText = user ? `user=${user}` : '';
  return {
    kind: 'occurrence',
    id: `${rule}\u001f${keyText}\u001f${deadline}`,
    at: deadline,
    rule,
    key,
    key_text: keyText,
    local_date: date,
    deadline,
    timezone: 'UTC',
    outcome,
    final: outcome !== 'missing',
    arrived_at: outcome === 'on_time' ? deadline - 60_000 : null,
    lateness_seconds: null,
    count: outcome === 'on_time' ? 1 : 0,
    min_count: 1,
    files: [],
    closes_at: deadline + 86_400_000,
    after_close: [],
  };
}

const novemberDays = Array.from({ length: 30 }, (_, i) => `2026-11-${String(i + 1).padStart(2, '0')}`);

describe('the /sla month on its first day', () => {
  const backend = new HistoryBackend('sqlite');
  afterAll(() => backend.close());
  const { rules, problems } = parseRuleFile('rules.yaml', RULES);

  async function page(store: HistoryStore, now: number, url = '/sla', configured = rules): Promise<{ status: number; body: string }> {
    const reply = await slaPage({ url } as IncomingMessage, {
      sla: () => ({
        ledger: store.ledger,
        objective: () => 0.9,
        due: (rule, from, to) => dueOfRule(configured, {}, rule, from, to, now),
        lines: () => ledgerLines(configured),
      }),
      info: () => ({ timezone: 'UTC', version: 't' }),
      now: () => now,
    });
    return { status: reply.status, body: String(reply.body) };
  }

  /** The day cells of a line (`Statement` + `user=BANK1`), as `date:class`. */
  function cells(body: string, rule: string, keyText: string): string[] {
    // On the grid a partner's key links to its statement; on a statement it is plain text.
    const named = (th: string): boolean => (keyText === '' ? th === rule : th.startsWith(`${rule}<br>`) && (th.endsWith(`>${keyText}</a>`) || th.endsWith(`>${keyText}</span>`)));
    const row = [...body.matchAll(/<tr><th scope="row" class="rule">(.*?)<\/th>(.*?)<\/tr>/gs)].find((m) => named((m[1] ?? '').replaceAll('<wbr>', '')))?.[2];
    if (row === undefined) return [];
    return [...row.matchAll(/<td class="day ([^"]*)" title="(\d{4}-\d{2}-\d{2})/g)].map((m) => `${m[2] ?? ''}:${m[1] ?? ''}`);
  }

  it('lists every line before the first deadline, days not due, and the previous month one click away; after it, the day judged', async () => {
    expect(problems).toEqual([]);
    const store = await backend.open();
    // November judged whole for both partners; NewFeed was added on the 15th.
    await store.write([
      ...novemberDays.flatMap((d) => [occurrence('Statement', 'BANK1', d, 9, 'on_time'), occurrence('Statement', 'BANK2', d, 9, d === '2026-11-30' ? 'missing' : 'on_time')]),
      ...novemberDays.filter((d) => d >= '2026-11-15').map((d) => occurrence('NewFeed', undefined, d, 12, 'on_time')),
    ]);

    // 1 December, 08:00 UTC: no deadline of December has come.
    const before = await page(store, Date.parse('2026-12-01T08:00:00Z'));
    expect(before.status).toBe(200);
    expect(before.body).toContain('<h1>Expected files: 2026-12</h1>');
    expect(before.body).not.toContain('No occurrences recorded');
    expect(before.body).toContain('No deadline of 2026-12 has come yet');
    expect(before.body).toContain('<a href="/sla?month=2026-11">2026-11</a> has the last month');
    for (const [rule, key] of [['Statement', 'user=BANK1'], ['Statement', 'user=BANK2'], ['NewFeed', '']] as const) {
      const line = cells(before.body, rule, key);
      expect(line, `${rule} ${key}`).toHaveLength(31);
      expect(new Set(line.map((c) => c.split(':')[1])), `${rule} ${key}`).toEqual(new Set(['not-due']));
    }
    // Each line says since when it is judged (coverage), as on any other day.
    expect(before.body).toContain('since 2026-11-01');
    expect(before.body).toContain('since 2026-11-15');

    // 10:00 UTC, the first deadline judged: BANK1's file came, BANK2's did not.
    await store.write([occurrence('Statement', 'BANK1', '2026-12-01', 9, 'on_time'), occurrence('Statement', 'BANK2', '2026-12-01', 9, 'missing')]);
    const after = await page(store, Date.parse('2026-12-01T10:00:00Z'));
    expect(after.body).not.toContain('No deadline of 2026-12 has come yet');
    expect(cells(after.body, 'Statement', 'user=BANK1').slice(0, 2)).toEqual(['2026-12-01:on_time', '2026-12-02:not-due']);
    expect(cells(after.body, 'Statement', 'user=BANK2').slice(0, 2)).toEqual(['2026-12-01:missing', '2026-12-02:not-due']);
    // NewFeed's noon deadline has not come: its line is there, not due.
    expect(cells(after.body, 'NewFeed', '')[0]).toBe('2026-12-01:not-due');
  });

  it('marks the days of a rule added mid-month before its first judged deadline as not monitored, and a line never judged as such', async () => {
    const store = await backend.open();
    await store.write(novemberDays.filter((d) => d >= '2026-11-15').map((d) => occurrence('NewFeed', undefined, d, 12, 'on_time')));
    const november = await page(store, Date.parse('2026-12-01T08:00:00Z'), '/sla?month=2026-11');
    const feed = cells(november.body, 'NewFeed', '');
    expect(feed.slice(13, 15)).toEqual(['2026-11-14:not-monitored', '2026-11-15:on_time']);
    expect(november.body).toContain('title="2026-11-14: not monitored (the ledger judges from 2026-11-15)"');
    // Statement has no occurrence yet (its rule was configured today): listed, every day before today not monitored.
    const bank1 = cells(november.body, 'Statement', 'user=BANK1');
    expect(bank1).toHaveLength(30);
    expect(new Set(bank1.map((c) => c.split(':')[1]))).toEqual(new Set(['not-monitored']));
  });

  it('leaves out a key the ledger knew that no rule judges now, except in a month where it has occurrences', async () => {
    const store = await backend.open();
    await store.write([occurrence('Statement', 'OLDBANK', '2026-11-10', 9, 'on_time')]);
    const december = await page(store, Date.parse('2026-12-01T08:00:00Z'));
    expect(december.body).not.toContain('user=OLDBANK');
    const november = await page(store, Date.parse('2026-12-01T08:00:00Z'), '/sla?month=2026-11');
    expect(cells(november.body, 'Statement', 'user=OLDBANK')[9]).toBe('2026-11-10:on_time');
  });

  it('a partner\'s statement lists the rule that watches that partner alone by match, not only the for_each lines (11c)', async () => {
    // The shape discover proposes for a one-partner flow: no for_each, the partner in match.
    const withOwn = parseRuleFile(
      'rules.yaml',
      `${RULES}
  - name: Bank1Cobranca
    type: missing_file
    match: { user: [BANK1], file: ["COBRANCA_*.RET"] }
    deadline: "0 10 * * *"
    timezone: UTC
    window: 1d
    severity: warning
`,
    );
    expect(withOwn.problems).toEqual([]);
    const store = await backend.open();
    await store.write([occurrence('Statement', 'BANK1', '2026-11-10', 9, 'on_time'), occurrence('Statement', 'BANK2', '2026-11-10', 9, 'on_time'), occurrence('Bank1Cobranca', undefined, '2026-11-10', 10, 'missing')]);
    const at = Date.parse('2026-12-01T08:00:00Z');
    const bank1 = await page(store, at, '/sla?month=2026-11&key=user=BANK1', withOwn.rules);
    expect(cells(bank1.body, 'Bank1Cobranca', '')[9]).toBe('2026-11-10:missing');
    expect(cells(bank1.body, 'Statement', 'user=BANK1')[9]).toBe('2026-11-10:on_time');
    expect(bank1.body).toContain('Bank1Cobranca');
    const bank2 = await page(store, at, '/sla?month=2026-11&key=user=BANK2', withOwn.rules);
    expect(bank2.body).not.toContain('Bank1Cobranca');
    expect(cells(bank2.body, 'Statement', 'user=BANK2')[9]).toBe('2026-11-10:on_time');
  });
});
