import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { zonedTime } from '../../src/util/zoned-time.js';

/**
 * zonedTime works out an instant's fields from the zone's offset of that UTC day, and asks Intl on a day the offset
 * changes: whatever the instant, it must say what Intl says — across DST changes of both hemispheres, half-hour and
 * 45-minute offsets, a half-hour DST (Lord Howe), zones that changed their standard time, and milliseconds.
 */
const ZONES = ['UTC', 'America/Sao_Paulo', 'America/New_York', 'Europe/London', 'Europe/Berlin', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Chatham', 'Pacific/Kiritimati', 'America/Caracas', 'Africa/Casablanca'];

const formatters = new Map(
  ZONES.map((timeZone) => [timeZone, new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'longOffset' })]),
);

function intl(ms: number, timeZone: string): string[] {
  const parts = (formatters.get(timeZone) as Intl.DateTimeFormat).formatToParts(new Date(ms));
  const get = (type: string): string => parts.find((p) => p.type === type)?.value ?? '';
  return [get('year'), get('month'), get('day'), get('hour'), get('minute'), get('second'), get('timeZoneName')];
}

describe('zonedTime', () => {
  it('says what Intl says for any instant from 1970 to 2100 in zones with every kind of offset change', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Date.UTC(2100, 0, 1) }), fc.constantFrom(...ZONES), (ms, zone) => {
        const t = zonedTime(ms, zone);
        expect([t.year, t.month, t.day, t.hour, t.minute, t.second, t.gmtOffset]).toEqual(intl(ms, zone));
      }),
      { numRuns: 3_000 },
    );
  });

  it('says what Intl says around each DST change of 2026 to the second', () => {
    // Sao Paulo has no DST since 2019; New York, London, Lord Howe (30 min) and Chatham change in 2026.
    for (const zone of ZONES) {
      for (let ms = Date.UTC(2026, 0, 1); ms < Date.UTC(2027, 0, 1); ms += 3_600_000) {
        const before = intl(ms, zone)[6];
        const after = intl(ms + 3_600_000, zone)[6];
        if (before === after) continue;
        for (let s = ms - 120_000; s <= ms + 3_600_000 + 120_000; s += 7_777) expect([zone, ...Object.values(zonedTime(s, zone))]).toEqual([zone, ...intl(s, zone)]);
      }
    }
  });
});
