import { describe, expect, it } from 'vitest';
import { MINUTE, iso, runScenario } from './shipped-rules-noise.js';

describe('the shipped rules on the simulator: steady (no noise, see shipped-rules-noise.ts)', () => {
  it('steady: ten business days of normal traffic fire nothing', async () => {
    const { fired } = await runScenario('steady', 5 * MINUTE);
    expect(fired.map((f) => `${iso(f.firedAt)} ${JSON.stringify(f.labels)}`)).toEqual([]);
  }, 120_000);
});
