/**
 * Slot arithmetic of the open-addressing tables of 64-bit keys (SeenTransfers, duplicate_file's SingleCopies):
 * power-of-two sizes and a home slot from a multiplicative mix.
 */

/**
 * Slots (a power of two, at least `minSlots`) for `n` entries at `maxLoad` at most (by default half: room to grow
 * before the next resize).
 */
export function slotsFor(n: number, minSlots: number, maxLoad = 0.5): number {
  let slots = minSlots;
  while (slots * maxLoad < n) slots *= 2;
  return slots;
}

/**
 * The home slot of a key in a table of `slots` (a power of two): the top bits of a multiplicative hash of both
 * halves. Top bits, because the low bits of a product depend only on the low bits of what was multiplied:
 * hex keys are uniform anyway, but hashed and hand-written ids (and keys whose halves are equal) need the mix.
 */
export function slotOf(hi: number, lo: number, slots: number): number {
  return Math.imul(hi ^ Math.imul(lo, 0x85ebca6b), 0x9e3779b1) >>> (Math.clz32(slots) + 1);
}
