import { describe, expect, it } from 'vitest';
import { BusProgress } from '../../src/cluster/bus-progress.js';

const expected = new Map([
  [
    'prod',
    [
      { stream: 'prod/failures', result: 'error' as const },
      { stream: 'prod/successes', result: 'success' as const },
    ],
  ],
]);

describe('BusProgress', () => {
  it('has no complete span for a result kind while one of its streams is still reading its way to the present', () => {
    const progress = new BusProgress(expected, 0);
    progress.apply([
      { stream: 'prod/failures', source: 'prod', result: 'error', cursor: 1_000, since: 0, catchingUp: true },
      { stream: 'prod/successes', source: 'prod', result: 'success', cursor: 5_000, since: 0 },
    ]);
    expect(progress.completeUntil('prod', 'error')).toBeUndefined();
    expect(progress.completeUntil('prod', 'success')).toBe(5_000);
    // The catch-up's last window reached the present.
    progress.apply([{ stream: 'prod/failures', source: 'prod', result: 'error', cursor: 5_000, since: 0 }]);
    expect(progress.completeUntil('prod', 'error')).toBe(5_000);
  });
});
