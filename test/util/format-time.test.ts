import { describe, expect, it } from 'vitest';
import { formatRfc3339, formatTime, formatCellTime } from '../../src/util/format-time.js';

describe('formatTime', () => {
  const t = Date.UTC(2026, 10, 22, 13, 4, 5);

  it('names UTC', () => {
    expect(formatTime(t, 'UTC')).toBe('2026-11-22 13:04:05 UTC');
  });

  it('gives the offset and the IANA zone elsewhere', () => {
    expect(formatTime(t, 'America/Sao_Paulo')).toBe('2026-11-22 10:04:05 -03:00 (America/Sao_Paulo)');
    expect(formatTime(t, 'Asia/Kolkata')).toBe('2026-11-22 18:34:05 +05:30 (Asia/Kolkata)');
  });

  it('follows daylight saving time', () => {
    expect(formatTime(Date.UTC(2026, 6, 1, 12), 'Europe/Berlin')).toBe('2026-07-01 14:00:00 +02:00 (Europe/Berlin)');
    expect(formatTime(Date.UTC(2026, 0, 1, 12), 'Europe/Berlin')).toBe('2026-01-01 13:00:00 +01:00 (Europe/Berlin)');
  });

  it('shows +00:00 for a zone at offset zero that is not UTC itself', () => {
    expect(formatTime(Date.UTC(2026, 0, 1, 0, 0, 0), 'Europe/London')).toBe('2026-01-01 00:00:00 +00:00 (Europe/London)');
  });

  it('uses 00, not 24, at midnight', () => {
    expect(formatTime(Date.UTC(2026, 0, 2, 0, 0, 0), 'UTC')).toBe('2026-01-02 00:00:00 UTC');
  });
});

describe('formatRfc3339', () => {
  it('writes an instant with its zone’s offset, and with its milliseconds when asked (the evidence of an occurrence)', () => {
    const at = Date.parse('2026-11-25T12:00:44.123Z');
    expect(formatRfc3339(at, 'America/Sao_Paulo')).toBe('2026-11-25T09:00:44-03:00');
    expect(formatRfc3339(at, 'America/Sao_Paulo', { millis: true })).toBe('2026-11-25T09:00:44.123-03:00');
    expect(formatRfc3339(Date.parse('2026-11-25T12:00:44.007Z'), 'UTC', { millis: true })).toBe('2026-11-25T12:00:44.007Z');
    expect(Date.parse(formatRfc3339(at, 'Asia/Kolkata', { millis: true }))).toBe(at);
  });

  it('writes a table cell\'s time with the offset outside UTC, and its milliseconds when asked (evidence)', () => {
    const t = Date.UTC(2026, 10, 25, 12, 0, 44, 7);
    expect(formatCellTime(t, 'UTC')).toBe('2026-11-25 12:00:44');
    expect(formatCellTime(t, 'UTC', { millis: true })).toBe('2026-11-25 12:00:44.007');
    expect(formatCellTime(t, 'America/Sao_Paulo', { millis: true })).toBe('2026-11-25 09:00:44.007 -03:00');
  });
});
