import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { discoverFlows } from '../../src/flows/discover-flows.js';
import { proposalYaml } from '../../src/flows/flow-report-format.js';
import { FlowSummaries } from '../../src/flows/flow-summary.js';
import { escapeHtml } from '../../src/http/status-page/safe-html.js';
import { successfulTransfer as transfer } from '../helpers/flow-transfer.js';

/**
 * Names from the monitored service are anyone's (issue 52): a tab, a carriage return or a right-to-left override in a
 * file or user name must leave the proposed rule file readable by any YAML parser, with the exact names back, and must
 * show on the pages as what they are.
 */

const DAY = 86_400_000;
const START = Date.parse('2026-09-01T00:00:00Z');

describe('names with control and bidirectional characters', () => {
  it('are written escaped into the proposed rule file, which parses back to the exact names', () => {
    const summaries = new FlowSummaries();
    const user = 'BANK\u202eLIVE';
    for (let d = 0; d < 30; d++) summaries.add(transfer(START + d * DAY + 7 * 3_600_000 + (d % 5) * 60_000, user, `STMT\t${d % 10}\r_A.RET`));
    const report = discoverFlows(summaries.all(), { since: START - 1, until: START + 30 * DAY, timezone: 'UTC', minOccurrences: 8, calendars: [], rules: [], severalSources: false, transfersRead: 30 });
    expect(report.flows).toHaveLength(1);
    const text = proposalYaml(report, { unwatchedOnly: true, by: 'test' });
    // No raw tab, carriage return or override anywhere (comments included).
    expect(text).not.toMatch(/[\t\r\u202e]/);
    const parsed = parse(text) as { rules: Array<{ match: { user: string[]; file: string[] } }> };
    expect(parsed.rules[0]?.match.user).toEqual([user]);
    expect(parsed.rules[0]?.match.file[0]).toContain('STMT\t');
  });

  it('keep a literal * or ? of a name from becoming a wildcard: each is written as one ?', () => {
    const summaries = new FlowSummaries();
    for (let d = 0; d < 30; d++) {
      summaries.add(transfer(START + d * DAY + 7 * 3_600_000 + (d % 5) * 60_000, 'BANK1', `*ALL*_${d}?.TXT`));
      // A neighbour the written-as-is `*ALL*_*?.TXT` would take (and the `?` version does not).
      summaries.add(transfer(START + d * DAY + 9 * 3_600_000 + (d % 5) * 60_000, 'BANK1', `SMALL_DETAIL_${d}X.TXT`));
    }
    const report = discoverFlows(summaries.all(), { since: START - 1, until: START + 30 * DAY, timezone: 'UTC', minOccurrences: 8, calendars: [], rules: [], severalSources: false, transfersRead: 60 });
    const star = report.flows.find((f) => f.example.startsWith('*'));
    expect(star?.pattern).toBe('?ALL?_*?.TXT');
    expect(star?.rule.match['file']).toEqual(['?ALL?_*?.TXT']);
    expect(report.flows.find((f) => f.example.startsWith('SMALL'))?.pattern).toBe('SMALL_DETAIL_*X.TXT');
  });

  it('show bidirectional controls on the pages as what they are', () => {
    expect(escapeHtml('evil\u202e.RET <b>')).toBe('evil[U+202E].RET &lt;b&gt;');
  });
});
