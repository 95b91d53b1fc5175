import { describe, expect, it } from 'vitest';
import { nextUri, parseReportQuery } from '../../src/simulator/report-query.js';

const defaults = { now: 2_000_000, defaultStart: 1_000_000 };

describe('parseReportQuery / nextUri', () => {
  it('resolves defaults: start from the history start, end now, limit 100, all events', () => {
    expect(parseReportQuery(new URLSearchParams(''), defaults)).toMatchObject({ start: 1_000_000, end: 2_000_000, limit: 100, index: 0, events: [], results: undefined });
  });

  it('round-trips every filter, including hostile file names, through next', () => {
    const q = parseReportQuery(
      new URLSearchParams([
        ['start', '5'], ['end', '10'], ['events', '7'], ['events', '5'], ['limit', '3'], ['results', '-1'],
        ['instance', 'PROD01'], ['user', 'BANK 1&x=y'], ['filename', '/in/a+b/<!channel>#?.RET'], ['tags', 'CNAB240,RETORNO'],
      ]),
      defaults,
    );
    const next = nextUri(q, 6);
    expect(next.startsWith('/reports/v2/transfers?start=5&end=10&events=5&events=7&limit=3&')).toBe(true);
    const again = parseReportQuery(new URL(next, 'http://x').searchParams, defaults);
    expect(again).toEqual({ ...q, index: 6 });
  });

  it('writes an empty events= when the query has no events filter, and accepts it back', () => {
    const q = parseReportQuery(new URLSearchParams('start=1&end=2'), defaults);
    const next = new URL(nextUri(q, 1), 'http://x').searchParams;
    expect(next.getAll('events')).toEqual(['']);
    expect(parseReportQuery(next, defaults).events).toEqual([]);
  });

  it('rejects a parameter given twice', () => {
    expect(() => parseReportQuery(new URLSearchParams('limit=1&limit=2'), defaults)).toThrow(expect.objectContaining({ code: 'SIM_BAD_REQUEST' }));
  });
});
