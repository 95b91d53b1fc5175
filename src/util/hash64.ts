/**
 * A 64-bit hash of a string as two unsigned 32-bit halves: FNV-1a and a murmur-mixed variant over the UTF-16
 * code units. Not cryptographic; for keys of in-memory tables where a collision (about n²/2⁶⁵ for n keys) costs
 * at most one wrong answer among billions.
 */
export function hash64(text: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return [a >>> 0, b >>> 0];
}
