/**
 * Seeded pseudo-randomness for the simulator. Every random choice is derived from a hash of (seed, what,
 * where), so the generated history is a pure function of its inputs: any range, queried in any page size at
 * any moment, yields the same records. Not for anything secret (tokens use node:crypto).
 */

import { finalMix32 } from '../util/final-mix32.js';

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** True with probability `p`. */
  chance(p: number): boolean;
}

/** Mixes 32-bit integers into one well-spread 32-bit hash (murmur3 finaliser over a simple combine). */
export function hash32(...values: number[]): number {
  let h = 0x9e3779b9;
  for (const value of values) {
    // Fold numbers beyond 32 bits (bucket numbers, epoch ms) so their high bits still count.
    const low = value | 0;
    const high = Math.floor(value / 0x1_0000_0000) | 0;
    h = Math.imul(h ^ low, 0x85ebca6b);
    h = (h << 13) | (h >>> 19);
    h = Math.imul(h ^ high, 0xc2b2ae35);
    h = (h << 17) | (h >>> 15);
  }
  return finalMix32(h);
}

/** A 32-bit hash of a string (FNV-1a), to mix names such as a scenario into seeds. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Uniform in [0, 1) from a hash of the given values, for one-off decisions without a generator. */
export function hashUnit(...values: number[]): number {
  return hash32(...values) / 0x1_0000_0000;
}

/** mulberry32: tiny, fast, and good enough for synthetic data. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new RangeError('pick from an empty list');
      return item;
    },
    chance: (p) => next() < p,
  };
}
