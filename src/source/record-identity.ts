import { hash } from 'node:crypto';
import type { ServiceRecord } from './transfer.js';
import { finalMix32 } from '../util/final-mix32.js';

/**
 * The identity of a transfer record (contract section 8): a hash of every normalised field but DIAS (which grows by
 * one each day), so the same transfer is recognised however its fields were spelled and however often it is
 * fetched. It is what the poller and the rule engine deduplicate on, and what a leader sends with each transfer.
 *
 * A 64-bit hash computed in JavaScript straight from the fields, as 16 hex digits. The tables that remember ids
 * (SeenTransfers) keep 64 bits of them, which is all the collision resistance an id ever had there (about n²/2⁶⁵
 * for n ids held: below 10⁻⁸ for a million). Version 1, SHA-256 over the JSON text of the fields, was a third of
 * the client's time (JSON.stringify of the fields and node's one-shot digest, ~2.8 µs a record against ~0.6 µs);
 * it is kept as `recordIdentityV1` to read the ids that state saved by earlier versions still holds.
 *
 * The hash: each field is read as 32-bit words (two UTF-16 code units, or an integer's low and high halves), each
 * word scrambled as MurmurHash3 scrambles a block and fed to two 32-bit lanes that update differently (a bijection
 * of each lane for a given word), a string closed by its length and a null by a tag of its own, so that field
 * boundaries, "" and null and 0 stay apart. The lanes are then mixed into each other and finalised (both steps
 * bijective, so none of the 64 bits is lost). Not cryptographic: a service that wanted two records to look like one
 * could leave one out.
 *
 * Changing this function gives every transfer a new id: a daemon started on state saved with another version
 * would hand the transfers of its last overlap on again (see IDENTITY_VERSION and PollStream.restore).
 */
export function recordIdentity(r: ServiceRecord): string {
  lanes.a = SEED_A;
  lanes.b = SEED_B;
  // Written out in IDENTITY_FIELDS order (a loop over the names was a keyed load per field).
  text(r.DATAHORA);
  text(r.INSTANCE);
  text(r.USUARIO);
  text(r.CONEXAO);
  text(r.DATAARQUIVO);
  integer(r.EVENTO);
  text(r.HORAARQUIVO);
  integer(r.MAXTAMREG);
  integer(r.NUMREG);
  text(r.MENSAGEM);
  text(r.NOMEARQUIVO);
  text(r.TAGS);
  integer(r.PROCID);
  text(r.REDE);
  integer(r.RESULTADO);
  integer(r.TAMARQUIVO);
  integer(r.THREADID);
  text(r.TIPOREC);
  const x = lanes.a ^ Math.imul(lanes.b, 0x9e3779b1);
  const y = lanes.b ^ Math.imul(x, 0x85ebca6b);
  return hex64(finalMix32(x), finalMix32(y));
}

/** The identity's version, saved with remembered ids: ids saved under another version are not comparable. */
export const IDENTITY_VERSION = 2;

/** Field order of the identity; fixed so identities survive code changes that reorder fields. */
export const IDENTITY_FIELDS = [
  'DATAHORA',
  'INSTANCE',
  'USUARIO',
  'CONEXAO',
  'DATAARQUIVO',
  'EVENTO',
  'HORAARQUIVO',
  'MAXTAMREG',
  'NUMREG',
  'MENSAGEM',
  'NOMEARQUIVO',
  'TAGS',
  'PROCID',
  'REDE',
  'RESULTADO',
  'TAMARQUIVO',
  'THREADID',
  'TIPOREC',
] as const satisfies ReadonlyArray<Exclude<keyof ServiceRecord, 'DIAS'>>;

/**
 * Version 1 of the identity (up to 0.1.x): SHA-256 over the JSON of the fields in IDENTITY_FIELDS order, the first
 * 32 hex digits. Only to recognise what state saved by those versions remembers.
 */
export function recordIdentityV1(record: ServiceRecord): string {
  const text = JSON.stringify(IDENTITY_FIELDS.map((f) => record[f]));
  return hash('sha256', text, 'buffer').toString('hex', 0, 16);
}

/** The identity function of a version, for ids remembered by an earlier version; undefined for one not known. */
export function identityOfVersion(version: number): ((record: ServiceRecord) => string) | undefined {
  if (version === IDENTITY_VERSION) return recordIdentity;
  if (version === 1) return recordIdentityV1;
  return undefined;
}

const SEED_A = 0x2545f491;
const SEED_B = 0x9e3779b9 | 0;
/** Tags closing a field, so that a string, an integer and a null never feed the same words. */
const STRING_END = 0x5bd1e995;
const INTEGER_END = 0x27d4eb2f;
const NULL_FIELD = 0x165667b1;

/** The two lanes of the hash being computed (one record at a time: the process has one thread of JavaScript). */
const lanes = { a: 0, b: 0 };

function word(w: number): void {
  let k = Math.imul(w, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  let a = lanes.a ^ k;
  a = (a << 13) | (a >>> 19);
  lanes.a = (Math.imul(a, 5) + 0xe6546b64) | 0;
  let b = Math.imul(lanes.b ^ k, 0x85ebca6b);
  b ^= b >>> 13;
  lanes.b = b;
}

function text(s: string): void {
  const n = s.length;
  // `word`, written out with the lanes in locals for the string's pairs: the same words, without a load and a
  // store of each lane per pair (a twentieth of the identity's time).
  let a = lanes.a;
  let b = lanes.b;
  let i = 0;
  for (; i + 1 < n; i += 2) {
    let k = Math.imul(s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16), 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    a ^= k;
    a = (a << 13) | (a >>> 19);
    a = (Math.imul(a, 5) + 0xe6546b64) | 0;
    b = Math.imul(b ^ k, 0x85ebca6b);
    b ^= b >>> 13;
  }
  lanes.a = a;
  lanes.b = b;
  // A last odd code unit alone: the length that closes the string keeps "a" and "a\0" apart.
  if (i < n) word(s.charCodeAt(i));
  word(n ^ STRING_END);
}

/** A safe integer as its low and high 32 bits (two's complement: -1 is not 2³²-1), or null. */
function integer(v: number | null): void {
  if (v === null) {
    word(NULL_FIELD);
    return;
  }
  word(v >>> 0);
  word(Math.floor(v / 4294967296) ^ INTEGER_END);
}

const HEX_DIGIT = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/** 16 hex digits made as one string (concatenating pairs of digits took three times as long and left seven strings). */
function hex64(hi: number, lo: number): string {
  const d = HEX_DIGIT as number[];
  return String.fromCharCode(
    d[hi >>> 28] as number, d[(hi >>> 24) & 15] as number, d[(hi >>> 20) & 15] as number, d[(hi >>> 16) & 15] as number,
    d[(hi >>> 12) & 15] as number, d[(hi >>> 8) & 15] as number, d[(hi >>> 4) & 15] as number, d[hi & 15] as number,
    d[lo >>> 28] as number, d[(lo >>> 24) & 15] as number, d[(lo >>> 20) & 15] as number, d[(lo >>> 16) & 15] as number,
    d[(lo >>> 12) & 15] as number, d[(lo >>> 8) & 15] as number, d[(lo >>> 4) & 15] as number, d[lo & 15] as number,
  );
}
