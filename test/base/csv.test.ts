import { describe, expect, it } from 'vitest';
import { csvField, csvLine } from '../../src/base/csv.js';

describe('CSV cells', () => {
  it('quotes a cell holding a separator of any locale (comma, semicolon, tab) or a line break, so no spreadsheet cuts it', () => {
    expect(csvField("x;=cmd|' /C calc'!A0")).toBe(`"x;=cmd|' /C calc'!A0"`);
    expect(csvField('a\t=1+1')).toBe('"a\t=1+1"');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('line\n=2')).toBe('"line\n=2"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('plain')).toBe('plain');
  });

  it('neutralises a text cell a spreadsheet would run as a formula; numbers stay numbers', () => {
    expect(csvField('=SUM(A1)')).toBe("'=SUM(A1)");
    expect(csvField('@cmd;x')).toBe(`"'@cmd;x"`);
    expect(csvField(-5)).toBe('-5');
    expect(csvField(null)).toBe('');
    expect(csvLine(['a;b', 1, null])).toBe('"a;b",1,\r\n');
  });
});
