/**
 * Local days and wall-clock times in a zone, computed here and not by the daemon's deadline code: the truths of the SLA
 * tests are planted with them.
 */

/** The UTC instant of a wall-clock time on a local date in a zone (two passes over the zone's offset). */
export function zoned(date: string, hour: number, timeZone: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(y, m - 1, d, hour);
  let t = wall;
  for (let i = 0; i < 2; i++) {
    const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(t));
    const get = (k: string) => Number(parts.find((p) => p.type === k)?.value);
    const seen = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'));
    t += wall - seen;
  }
  return t;
}

export function localDate(ms: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(ms));
}

/**
 * The local date `days` calendar days before `ms`'s date in the zone. Stepping by calendar days, not by 24-hour
 * instants: across a clock change, `now - n * DAY` lands on the same local date twice (and skips one) when the
 * test runs within the changed hour of midnight.
 */
export function localDaysBefore(ms: number, days: number, timeZone: string): string {
  const [y, m, d] = localDate(ms, timeZone).split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d - days)).toISOString().slice(0, 10);
}

/** A deterministic plan (mulberry32). */
export function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
