import { describe, expect, it } from 'vitest';
import { zonedTime } from '../../src/util/zoned-time.js';

describe('zonedTime', () => {
  it('gives the wall-clock fields and the offset of an instant in a zone', () => {
    expect(zonedTime(Date.UTC(2026, 10, 22, 13, 4, 5), 'America/Sao_Paulo')).toEqual({
      year: '2026',
      month: '11',
      day: '22',
      hour: '10',
      minute: '04',
      second: '05',
      gmtOffset: 'GMT-03:00',
    });
  });

  it('crosses the date line where the zone does', () => {
    const t = zonedTime(Date.UTC(2026, 0, 1, 20, 30), 'Pacific/Kiritimati');
    expect([t.year, t.month, t.day, t.hour, t.minute, t.gmtOffset]).toEqual(['2026', '01', '02', '10', '30', 'GMT+14:00']);
  });

  it('gives midnight as 00 and offset zero as a GMT offset (bare or +00:00, as the ICU data has it)', () => {
    const t = zonedTime(Date.UTC(2026, 0, 2, 0, 0, 0), 'Europe/London');
    expect([t.day, t.hour, t.minute, t.second]).toEqual(['02', '00', '00', '00']);
    expect(['GMT', 'GMT+00:00']).toContain(t.gmtOffset);
  });

  it('follows daylight saving time', () => {
    expect(zonedTime(Date.UTC(2026, 6, 1, 12), 'Europe/Berlin').gmtOffset).toBe('GMT+02:00');
    expect(zonedTime(Date.UTC(2026, 0, 1, 12), 'Europe/Berlin').gmtOffset).toBe('GMT+01:00');
  });
});
