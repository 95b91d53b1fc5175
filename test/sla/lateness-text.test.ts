import { describe, expect, it } from 'vitest';
import { latenessMark, latenessText } from '../../src/sla/lateness-text.js';

describe('lateness as a person reads it (11c)', () => {
  it('is +seconds, +minutes, hours and minutes under ten hours, whole hours under two days, then days', () => {
    expect(latenessText(0)).toBe('+0s');
    expect(latenessText(44.4)).toBe('+44s');
    expect(latenessText(300)).toBe('+5m');
    expect(latenessText(3_590)).toBe('+1h');
    expect(latenessText(95 * 60)).toBe('+1h35m');
    // The figures: "late by 1413 min", "late by 1380 min", "late 10048 min", "LATE P95 4290 min".
    expect(latenessText(1_413 * 60)).toBe('+24h');
    expect(latenessText(1_380 * 60)).toBe('+23h');
    expect(latenessText(10_048 * 60)).toBe('+7d');
    expect(latenessText(4_290 * 60)).toBe('+3d');
  });

  it('is one unit in a grid cell', () => {
    expect(latenessMark(10)).toBe('+1m');
    expect(latenessMark(45 * 60)).toBe('+45m');
    expect(latenessMark(95 * 60)).toBe('+2h');
    expect(latenessMark(47 * 3600)).toBe('+47h');
    expect(latenessMark(72 * 3600)).toBe('+3d');
  });
});
