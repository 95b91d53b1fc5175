import { describe, expect, it } from 'vitest';
import type { LedgerOccurrence } from '../../src/history/sla-ledger-store.js';
import { renderSlaPage } from '../../src/http/status-page/render-sla-page.js';
import { reportRow } from '../../src/sla/sla-report.js';

/** The `/sla` month grid as an SLA owner hands it over (issue 44): one mark per deadline, what is open, what is not monitored. */

function occurrence(date: string, hour: number, outcome: LedgerOccurrence['outcome'], final = true, lateness: number | null = null): LedgerOccurrence {
  return {
    rule: 'Statement',
    key: { user: 'BANK1' },
    keyText: 'user=BANK1',
    localDate: date,
    deadline: Date.parse(`${date}T${String(hour).padStart(2, '0')}:00:00Z`),
    timezone: 'UTC',
    outcome,
    final,
    arrivedAt: null,
    latenessSeconds: lateness,
    count: outcome === 'missing' ? 0 : 1,
    minCount: 1,
    files: [],
    afterClose: [],
    excuse: null,
  };
}

describe('the /sla page', () => {
  it('shows each deadline of a day, an open missing as open, days before monitoring as not monitored, weekdays, and links every day to its evidence', async () => {
    const days = Array.from({ length: 30 }, (_, i) => `2026-11-${String(i + 1).padStart(2, '0')}`);
    const occurrences = [
      occurrence('2026-11-24', 9, 'on_time'),
      occurrence('2026-11-24', 15, 'late', true, 240),
      occurrence('2026-11-25', 9, 'missing', false),
      occurrence('2026-11-25', 15, 'on_time'),
    ];
    const tally = { rule: 'Statement', key: { user: 'BANK1' }, timezone: 'UTC', on_time: 2, late: 1, missing: 1, excused: 0, no_data: 0, latenessSeconds: [240], monitoredFrom: '2026-11-24' };
    const due = days.filter((d) => d <= '2026-11-25').flatMap((d) => [d, d]);
    const page = await renderSlaPage({ month: '2026-11', days, rows: [reportRow(tally, 0.99, due)], occurrences, version: 't', today: '2026-11-26', timezone: 'UTC', now: Date.parse('2026-11-26T10:00:00Z') }, 'n');
    const cellOf = (date: string): string => new RegExp(`<td class="day[^"]*"[^>]*title="${date}[^"]*"[^>]*>.*?</td>`, 's').exec(page)?.[0] ?? '';
    // Two deadlines on the 24th: the worst (late, with its minutes) and how many, each of them in the title.
    expect(cellOf('2026-11-24')).toContain('<span class="mark late"><span class="plus">+</span>4m</span><sup class="n">2</sup>');
    expect(cellOf('2026-11-24')).toContain('2026-11-24 15:00 UTC late (+4m)');
    expect(cellOf('2026-11-24')).toContain('2026-11-24 09:00 UTC on_time');
    // The 25th's morning is missing so far, not final: the worst of the day.
    expect(cellOf('2026-11-25')).toContain('<span class="mark missing open">✗…</span><sup class="n">2</sup>');
    expect(cellOf('2026-11-25')).toContain('missing so far (open until it closes)');
    // Each judged day links to its occurrences (and their files).
    expect(cellOf('2026-11-24')).toContain('<a href="/api/v1/sla/occurrences?from=2026-11-24&amp;to=2026-11-24&amp;rule=Statement">');
    // Before the 24th the key was not monitored: never "no deadline"; today and after: not due yet.
    expect(page).toContain('title="2026-11-23: not monitored (the ledger judges from 2026-11-24)">nm</td>');
    expect(page).toContain('title="2026-11-26: not due yet">·</td>');
    // Weekdays in the header (1 November 2026 is a Sunday), and the coverage of the month.
    expect(page).toMatch(/<th class="dayhead weekend">1<br><span class="wd">Su<\/span><\/th>/);
    expect(page).toContain('partial: 4 of 50 due judged (monitored since 2026-11-24)');
    // A printed page is a statement: it says what it covers and when it was made.
    expect(page).toContain('@media print');
    expect(page).toContain('Statement of expected files for 2026-11, made 2026-11-26 10:00 UTC');
  });

  it('as the statement of one partner lists every deadline with its evidence, to the millisecond in the rule zone, and keeps the partner in its links', async () => {
    const days = Array.from({ length: 30 }, (_, i) => `2026-11-${String(i + 1).padStart(2, '0')}`);
    const sp = (o: LedgerOccurrence): LedgerOccurrence => ({ ...o, timezone: 'America/Sao_Paulo' });
    const late = sp({ ...occurrence('2026-11-24', 12, 'late', true, 300), arrivedAt: Date.parse('2026-11-24T12:05:00.123Z'), files: [{ file: 'EXT_<b>.RET', at: Date.parse('2026-11-24T12:05:00.123Z'), source: 'sim' }] });
    const missing = sp({ ...occurrence('2026-11-25', 12, 'missing'), afterClose: [{ file: 'EXT_25.RET', at: Date.parse('2026-11-25T12:00:44.500Z'), source: 'sim' }] });
    const excused = sp({ ...occurrence('2026-11-26', 12, 'missing'), excuse: { by: 'ana', at: Date.parse('2026-11-26T15:00:00Z'), reason: 'bank strike' } });
    const tally = { rule: 'Statement', key: { user: 'BANK1' }, timezone: 'America/Sao_Paulo', on_time: 0, late: 1, missing: 1, excused: 1, no_data: 0, latenessSeconds: [300], monitoredFrom: '2026-11-24' };
    const page = await renderSlaPage(
      {
        month: '2026-11',
        days,
        rows: [reportRow(tally, 0.99, ['2026-11-24', '2026-11-25', '2026-11-26'])],
        occurrences: [excused, late, missing],
        version: 't',
        today: '2026-11-27',
        timezone: 'UTC',
        now: Date.parse('2026-11-27T10:00:00Z'),
        statementKey: { user: 'BANK1' },
      },
      'n',
    );
    expect(page).toContain('<h1>Statement of expected files: user=BANK1, 2026-11</h1>');
    expect(page).toContain('Statement of expected files of user=BANK1 for 2026-11, made 2026-11-27 10:00 UTC');
    const lines = [...page.matchAll(/<tr class="(\w+)"><td>(\S+) .*?<\/tr>/gs)].map((m) => m[0]);
    // In deadline order, whatever order the ledger gave.
    expect(lines.map((l) => /<td>(\S+) /.exec(l)?.[1])).toEqual(['2026-11-24', '2026-11-25', '2026-11-26']);
    // The late one: its deadline and arrival in the rule's zone, the arrival to the millisecond, the file as text.
    expect(lines[0]).toContain('<td>2026-11-24 09:00:00 -03:00</td><td class="outcome">late, +5m</td><td>2026-11-24 09:05:00.123 -03:00</td>');
    expect(lines[0]).toContain('EXT_<wbr>&lt;b&gt;.<wbr>RET');
    // The missing one keeps the file that came after the close; the excused one says who and why.
    expect(lines[1]).toContain('EXT_<wbr>25.<wbr>RET <span class="muted">2026-11-25 09:00:44.500 -03:00</span>');
    expect(lines[2]).toContain('missing, excused (not counted)');
    expect(lines[2]).toContain('ana: bank strike');
    // The month links keep the partner; "every partner" leads back.
    expect(page).toContain('href="/sla?month=2026-10&amp;key=user%3DBANK1"');
    expect(page).toContain('<a href="/sla?month=2026-11">every partner</a>');
  });

  it('links each partner of the month grid to its statement', async () => {
    const days = ['2026-11-01'];
    const tally = { rule: 'Statement', key: { user: 'BANK 1&2' }, timezone: 'UTC', on_time: 1, late: 0, missing: 0, excused: 0, no_data: 0, latenessSeconds: [], monitoredFrom: '2026-11-01' };
    const page = await renderSlaPage({ month: '2026-11', days, rows: [reportRow(tally, 0.99, ['2026-11-01'])], occurrences: [], version: 't', today: '2026-11-02' }, 'n');
    expect(page).toContain('href="/sla?month=2026-11&amp;key=user%3DBANK%201%262"');
    expect(page).not.toContain('id="statement"');
  });
});
