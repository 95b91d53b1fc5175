import { Cron } from 'croner';
import { describe, expect, it } from 'vitest';
import { CronSchedule, CronSchedules } from '../../src/rules/cron-schedule.js';

/** croner's own answers, the reference the remembered schedule must reproduce exactly. */
function croner(pattern: string, timezone: string) {
  const cron = new Cron(pattern, { timezone, paused: true });
  return {
    after: (t: number) => cron.nextRun(new Date(t))?.getTime(),
    atOrBefore: (t: number) => cron.previousRuns(1, new Date(Math.floor(t / 1000) * 1000 + 1000))[0]?.getTime(),
  };
}

/** A deterministic pseudo-random sequence, so a failure can be replayed. */
function lcg(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const CASES: Array<[string, string]> = [
  ['0 8 * * 1-5', 'America/Sao_Paulo'],
  ['*/10 * * * *', 'America/Sao_Paulo'],
  // DST: 02:30 does not exist on the spring-forward day and happens twice in autumn.
  ['30 2 * * *', 'America/New_York'],
  ['0 1-3 * * 0', 'Europe/Berlin'],
  ['0 9 1 * *', 'Asia/Kolkata'],
];

describe('CronSchedule', () => {
  for (const [pattern, zone] of CASES) {
    it(`answers like croner for "${pattern}" in ${zone}, walking forward, backward and jumping`, () => {
      const reference = croner(pattern, zone);
      const schedule = new CronSchedule(pattern, zone);
      const random = lcg(pattern.length * 7919 + zone.length);
      // Across both 2026 DST changes of the northern zones.
      let t = Date.UTC(2026, 2, 1);
      for (let i = 0; i < 120; i++) {
        const r = random();
        if (r < 0.6) t += Math.floor(random() * 6 * 3600_000); // forward, as evaluations go
        else if (r < 0.8) t -= Math.floor(random() * 2 * 86_400_000); // a step back (history, status page)
        else t = Date.UTC(2026, 0, 1) + Math.floor(random() * 365 * 86_400_000); // anywhere in the year
        expect(schedule.after(t), `after ${new Date(t).toISOString()}`).toBe(reference.after(t));
        expect(schedule.atOrBefore(t), `at or before ${new Date(t).toISOString()}`).toBe(reference.atOrBefore(t));
      }
    });
  }

  it('is exact on a run itself: the run is at-or-before it, and after it is the next one', () => {
    const schedule = new CronSchedule('0 8 * * *', 'UTC');
    const run = Date.UTC(2026, 0, 5, 8);
    expect(schedule.atOrBefore(run)).toBe(run);
    expect(schedule.atOrBefore(run - 1)).toBe(run - 86_400_000);
    expect(schedule.after(run)).toBe(run + 86_400_000);
    expect(schedule.after(run - 1)).toBe(run);
  });

  it('says undefined where a pattern has no run (a single year in the past)', () => {
    const schedule = new CronSchedule('0 0 0 1 1 * 2020', 'UTC');
    expect(schedule.after(Date.UTC(2021, 0, 1))).toBeUndefined();
    expect(schedule.atOrBefore(Date.UTC(2019, 0, 1))).toBeUndefined();
    expect(schedule.atOrBefore(Date.UTC(2021, 0, 1))).toBe(Date.UTC(2020, 0, 1));
  });

  it('is shared per pattern and zone', () => {
    const schedules = new CronSchedules();
    expect(schedules.get('0 8 * * *', 'UTC')).toBe(schedules.get('0 8 * * *', 'UTC'));
    expect(schedules.get('0 8 * * *', 'UTC')).not.toBe(schedules.get('0 8 * * *', 'Europe/Berlin'));
  });
});
