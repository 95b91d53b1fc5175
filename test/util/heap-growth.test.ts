import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, limitHeapGrowth } from '../../src/util/heap-growth.js';

describe('limitHeapGrowth', () => {
  it('sets the heap growing factor when node was started without one', () => {
    const set: string[] = [];
    expect(limitHeapGrowth(['--enable-source-maps'], (f) => set.push(f))).toBe(true);
    expect(set).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });

  it.each([['--heap-growing-percent=0'], ['--heap-growing-percent=30'], ['--heap_growing_percent=80'], ['--heap-growing-percent']])(
    'leaves the operator’s %s alone',
    (flag) => {
      const set: string[] = [];
      expect(limitHeapGrowth(['--max-semi-space-size=4', flag], (f) => set.push(f))).toBe(false);
      expect(set).toEqual([]);
    },
  );

  it('does not mistake a similar flag for it', () => {
    const set: string[] = [];
    expect(limitHeapGrowth(['--heap-growing-percentage-report'], (f) => set.push(f))).toBe(true);
    expect(set).toHaveLength(1);
  });

  it('passes a flag this node accepts after start (V8 only prints an error for an unknown one)', () => {
    const set: string[] = [];
    limitHeapGrowth([], (f) => set.push(f));
    const setAfterStart = (flags: string): string => {
      const child = spawnSync(process.execPath, ['-e', 'require("node:v8").setFlagsFromString(process.argv.at(-1))', '--', flags], { encoding: 'utf8' });
      return `${child.stdout}${child.stderr}`;
    };
    expect(setAfterStart(set[0] as string)).toBe('');
    // The same check notices a flag V8 does not know.
    expect(setAfterStart('--heap-growing-percentage=50')).toMatch(/unrecognized flag/i);
  });
});
