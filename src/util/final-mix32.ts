/**
 * MurmurHash3's 32-bit finaliser: a bijection of the 32-bit integers in which every input bit reaches every output
 * bit, so a hash accumulated with cheap steps comes out well spread. Unsigned.
 */
export function finalMix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
