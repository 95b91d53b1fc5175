import { describe, expect, it } from 'vitest';
import { MEASURE_FROM, MEASURE_TO, MINUTE, iso, names, runScenario, type Fired } from './shipped-rules-noise.js';

describe('the shipped rules on the simulator: burst (no noise, see shipped-rules-noise.ts)', () => {
  it('burst: TransferErrorBurst for each planned burst of that partner; PartnerFailureRatio only right after one', async () => {
    const { fired, generator } = await runScenario('burst', MINUTE);
    const bursts = generator.planned(MEASURE_FROM - 30 * MINUTE, MEASURE_TO).bursts;
    expect(Object.keys(names(fired)).sort()).toEqual(['PartnerFailureRatio', 'TransferErrorBurst']);
    const burstOf = (f: Fired, within: number) =>
      bursts.find((b) => b.user === f.labels['user'] && b.instance === f.labels['mft_instance'] && f.firedAt >= b.start && f.firedAt <= b.start + within);
    // Each alert is a planned burst: fired within its two minutes (plus the evaluation step).
    const unexplained = fired.filter((f) => f.alertname === 'TransferErrorBurst' && !burstOf(f, 3 * MINUTE));
    expect(unexplained.map((f) => `${iso(f.firedAt)} ${f.labels['user']}`)).toEqual([]);
    // Each planned burst pages: it fired then, or the same partner's alert from a burst 15 minutes before still fires.
    const burstAlerts = fired.filter((f) => f.alertname === 'TransferErrorBurst');
    const unpaged = bursts.filter(
      (b) =>
        b.start >= MEASURE_FROM &&
        b.start + 3 * MINUTE <= MEASURE_TO &&
        !burstAlerts.some((f) => f.labels['user'] === b.user && f.firedAt >= b.start - 16 * MINUTE && f.firedAt <= b.start + 3 * MINUTE),
    );
    expect(unpaged.map((b) => `${iso(b.start)} ${b.user}`)).toEqual([]);
    expect(burstAlerts.length).toBeGreaterThan(bursts.length * 0.6);
    // A failure ratio over 25% only in the half hour after a burst of that partner on that instance.
    const ratios = fired.filter((f) => f.alertname === 'PartnerFailureRatio');
    expect(ratios.filter((f) => !burstOf(f, 30 * MINUTE)).map((f) => `${iso(f.firedAt)} ${f.labels['user']}`)).toEqual([]);
  }, 120_000);
});
