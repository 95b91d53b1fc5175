import { describe, expect, it } from 'vitest';
import { addRunValues, looksLikeDate, nameShape, newRunSummaries, shapePattern } from '../../src/flows/name-shape.js';

/** The pattern of a flow from its files' names, as discover writes it. */
function patternOf(names: string[], strict = false): string {
  const first = nameShape(names[0] as string);
  const runs = newRunSummaries(first.values);
  for (const n of names.slice(1)) {
    const s = nameShape(n);
    expect(s.key).toBe(first.key);
    addRunValues(runs, s.values);
  }
  return shapePattern(first.pieces, runs, strict);
}

describe('a flow’s pattern from its names', () => {
  it('keeps what every file shares (the partner in the path) and writes dates, times and sequences as *', () => {
    expect(patternOf(['/in/BANK1/EXTRATO_20261125.RET', '/in/BANK1/EXTRATO_20261126.RET'])).toBe('/in/BANK1/EXTRATO_*.RET');
    expect(patternOf(['/out/ACME/PAG_25112026_0001.REM', '/out/ACME/PAG_26112026_0002.REM'])).toBe('/out/ACME/PAG_*_*.REM');
    expect(patternOf(['/in/X/CNAB240_20261125.RET', '/in/X/CNAB240_20261126.RET'])).toBe('/in/X/CNAB240_*.RET');
  });

  it('writes a date as * even when it did not change while the history was read (a year, a month)', () => {
    expect(patternOf(['/in/P/FEED_2026-11-25.xml', '/in/P/FEED_2026-11-26.xml'])).toBe('/in/P/FEED_*-*-*.xml');
    expect(patternOf(['/out/P/FECHAMENTO_202611.TXT'])).toBe('/out/P/FECHAMENTO_*.TXT');
    expect(looksLikeDate('20261127')).toBe(true);
    expect(looksLikeDate('27112026')).toBe(true);
    expect(looksLikeDate('240')).toBe(false);
    expect(looksLikeDate('0001')).toBe(false);
  });

  it('takes a UUID or a long hexadecimal id as one run, so the flow keeps one shape', () => {
    const a = nameShape('/in/P/doc_3f2a1b4c-9d8e-4f00-a1b2-c3d4e5f60718.pdf');
    const b = nameShape('/in/P/doc_0a1b2c3d-4e5f-4a6b-8c9d-0e1f2a3b4c5d.pdf');
    expect(a.key).toBe(b.key);
    expect(patternOf(['/in/P/AVULSO_1a2b3c4d5e6f7a8b.pdf', '/in/P/AVULSO_9f8e7d6c5b4a3f2e.pdf'])).toBe('/in/P/AVULSO_*.pdf');
  });

  it('writes runs of one length as ? where * would take another flow’s files', () => {
    expect(patternOf(['/in/B/RET_20261125.RET', '/in/B/RET_20261126.RET'], true)).toBe('/in/B/RET_????????.RET');
  });

  it('reads only the start of a huge name', () => {
    const shape = nameShape(`/in/${'9'.repeat(5_000_000)}`);
    expect(shape.values[0]?.length).toBeLessThanOrEqual(1024);
  });
});
