import { describe, expect, it } from 'vitest';
import { latestSamples, sampleOf } from '../../src/rules/transfer-samples.js';
import { transfer } from './transfer-fixture.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ time: T0 + i, sample: sampleOf(transfer({ time: T0 + i, code: 36 })) }));

describe('latestSamples', () => {
  it('keeps the latest five, newest first', () => {
    expect(latestSamples(entries(8)).map((s) => s.time)).toEqual([T0 + 7, T0 + 6, T0 + 5, T0 + 4, T0 + 3]);
  });

  it('keeps all of a shorter list, newest first', () => {
    expect(latestSamples(entries(2)).map((s) => s.time)).toEqual([T0 + 1, T0]);
    expect(latestSamples([])).toEqual([]);
  });

  it('stops before `end` (entries stamped after now do not show yet)', () => {
    expect(latestSamples(entries(8), 3).map((s) => s.time)).toEqual([T0 + 2, T0 + 1, T0]);
    expect(latestSamples(entries(8), 7).map((s) => s.time)).toEqual([T0 + 6, T0 + 5, T0 + 4, T0 + 3, T0 + 2]);
  });
});

describe('sampleOf', () => {
  it('keeps what a message shows and nothing else (no id, source, record)', () => {
    const t = transfer({ time: T0, code: 12, file: 'A.RET', message: 'timeout', user: 'BANK2', instance: 'PROD02' });
    expect(sampleOf(t)).toStrictEqual({ time: T0, file: 'A.RET', code: 12, message: 'timeout', user: 'BANK2', instance: 'PROD02' });
  });
});
