import { eventName, type ServiceRecord, type Transfer } from './transfer.js';
import { canonicalServiceTime, formatServiceTime, parseServiceTime } from './service-time.js';
import { recordIdentity } from './record-identity.js';

/** The outcome of reading one element of a page's `data`: a transfer, or why it could not be read. */
export type RecordResult = { ok: true; transfer: Transfer } | { ok: false; reason: string };

class RecordProblem extends Error {}

/**
 * The longest text each field may have, in UTF-16 units. A service (or whatever sits in front of it) sent a
 * 10 MB file name and message once: held in rule windows, alert labels, samples, state files and log lines, it
 * took the daemon to 5 GB. A record with a longer field is invalid (counted, skipped, with this reason), except
 * MENSAGEM: it is only ever shown to people, so it is cut to MAX_MESSAGE_LENGTH instead (see `boundedMessage`).
 * The bounds are far above real values: Linux paths stop at 4096, user and instance names are identifiers.
 */
export const FIELD_MAX_LENGTH = {
  DATAHORA: 64,
  INSTANCE: 256,
  USUARIO: 256,
  NOMEARQUIVO: 4096,
  TAGS: 1024,
  CONEXAO: 1024,
  REDE: 1024,
  TIPOREC: 256,
  DATAARQUIVO: 64,
  HORAARQUIVO: 64,
} as const satisfies Partial<Record<keyof ServiceRecord, number>>;
/** MENSAGEM is cut here, with a note of how long it was (the same record always reads the same: identity holds). */
export const MAX_MESSAGE_LENGTH = 2048;
/** Integers given as strings are at most this long (a safe integer has 16 digits). */
const MAX_INTEGER_TEXT = 32;

/** A message over MAX_MESSAGE_LENGTH, cut on a whole character with how long it was. */
function boundedMessage(text: string): string {
  if (text.length <= MAX_MESSAGE_LENGTH) return text;
  let end = MAX_MESSAGE_LENGTH;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // do not split a surrogate pair
  return `${text.slice(0, end)}… (truncated from ${text.length} characters)`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/*
 * The readers below take a field's value, its name (for the reason) and its bound, not the record and a name: a
 * keyed load `rec[field]` with a different name at each call is a megamorphic lookup in V8, and so was the bound's
 * `FIELD_MAX_LENGTH[field]`. `normalise` reads each field once by name instead (every record of a page has one
 * shape, so each load is a single check): `readRecord` went from 1.35 to 0.95 µs a record, identity included
 * (30,000 records of the dense history, best of seven runs).
 */

const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;

/** Integers may arrive as numbers or as numeric strings ("42", " -1 "). */
function readInteger(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  if (typeof value === 'string' && value.length <= MAX_INTEGER_TEXT && INTEGER_TEXT.test(value)) {
    const n = Number(value.trim());
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

function requiredInteger(value: unknown, field: string): number {
  const n = readInteger(value);
  if (n === undefined) throw new RecordProblem(`${field} is missing or not an integer`);
  return n;
}

/** Optional integers: absent or null is null; anything else must be an integer. */
function optionalInteger(value: unknown, field: string): number | null {
  if (value === undefined || value === null || value === '') return null;
  const n = readInteger(value);
  if (n === undefined) throw new RecordProblem(`${field} is not an integer`);
  return n;
}

function tooLong(field: string, max: number, value: string): RecordProblem {
  return new RecordProblem(`${field} longer than ${max} characters (${value.length})`);
}

/** A required string no longer than `max` (`Infinity` for no bound). */
function requiredString(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string') throw new RecordProblem(`${field} is missing or not a string`);
  if (value.length > max) throw tooLong(field, max, value);
  return value;
}

/** Descriptive strings: absent or null is ''; a number (e.g. DATAARQUIVO 20240501) is kept as its digits. */
function optionalString(value: unknown, field: string, max: number): string {
  if (typeof value === 'string') {
    if (value.length > max) throw tooLong(field, max, value);
    return value;
  }
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new RecordProblem(`${field} is not a string`);
}

const NO_BOUND = Number.POSITIVE_INFINITY;

/** The transfer a record reads as; throws RecordProblem. The record is copied field by field: nothing else it holds is kept. */
function normalise(rec: Record<string, unknown>, source: string): Transfer {
  // DATAHORA as epoch ms and canonical text; almost every service sends the canonical form, read without objects.
  const datahora = requiredString(rec.DATAHORA, 'DATAHORA', FIELD_MAX_LENGTH.DATAHORA);
  let time = canonicalServiceTime(datahora);
  let canonical = datahora;
  if (time === undefined) {
    time = parseServiceTime(datahora);
    if (time === undefined) throw new RecordProblem('DATAHORA is not an ISO 8601 date-time');
    canonical = formatServiceTime(time);
  }
  // Fields are checked in this order: the first problem found is the reason given.
  const record: ServiceRecord = {
    DATAHORA: canonical,
    INSTANCE: requiredString(rec.INSTANCE, 'INSTANCE', FIELD_MAX_LENGTH.INSTANCE),
    USUARIO: requiredString(rec.USUARIO, 'USUARIO', FIELD_MAX_LENGTH.USUARIO),
    CONEXAO: optionalString(rec.CONEXAO, 'CONEXAO', FIELD_MAX_LENGTH.CONEXAO),
    DATAARQUIVO: optionalString(rec.DATAARQUIVO, 'DATAARQUIVO', FIELD_MAX_LENGTH.DATAARQUIVO),
    EVENTO: requiredInteger(rec.EVENTO, 'EVENTO'),
    HORAARQUIVO: optionalString(rec.HORAARQUIVO, 'HORAARQUIVO', FIELD_MAX_LENGTH.HORAARQUIVO),
    MAXTAMREG: optionalInteger(rec.MAXTAMREG, 'MAXTAMREG'),
    NUMREG: optionalInteger(rec.NUMREG, 'NUMREG'),
    MENSAGEM: boundedMessage(optionalString(rec.MENSAGEM, 'MENSAGEM', NO_BOUND)),
    NOMEARQUIVO: requiredString(rec.NOMEARQUIVO, 'NOMEARQUIVO', FIELD_MAX_LENGTH.NOMEARQUIVO),
    TAGS: optionalString(rec.TAGS, 'TAGS', FIELD_MAX_LENGTH.TAGS),
    PROCID: optionalInteger(rec.PROCID, 'PROCID'),
    REDE: optionalString(rec.REDE, 'REDE', FIELD_MAX_LENGTH.REDE),
    RESULTADO: requiredInteger(rec.RESULTADO, 'RESULTADO'),
    // A missing size must not hide a failed transfer from alerting, so it reads as 0 bytes.
    TAMARQUIVO: optionalInteger(rec.TAMARQUIVO, 'TAMARQUIVO') ?? 0,
    THREADID: optionalInteger(rec.THREADID, 'THREADID'),
    TIPOREC: optionalString(rec.TIPOREC, 'TIPOREC', FIELD_MAX_LENGTH.TIPOREC),
    DIAS: optionalInteger(rec.DIAS, 'DIAS'),
  };
  return transferOf(record, undefined, source, time);
}

/** Validate and normalise one element of `data`. Never throws: a bad record gives a reason. */
export function parseRecord(raw: unknown, source: string): RecordResult {
  const read = readRecord(raw, source);
  return typeof read === 'string' ? { ok: false, reason: read } : { ok: true, transfer: read };
}

/**
 * `parseRecord` without the result object (the client reads a million records in a backfill): the transfer, or
 * why the record cannot be read. Never throws.
 */
export function readRecord(raw: unknown, source: string): Transfer | string {
  if (!isPlainObject(raw)) return 'record is not an object';
  try {
    return normalise(raw, source);
  } catch (err) {
    if (err instanceof RecordProblem) return err.message;
    throw err;
  }
}

/**
 * The typed transfer of a normalised record whose identity is known (sent between replicas), or is computed when
 * first asked for (`id` undefined: read from a page). `time` is DATAHORA as epoch ms when the caller has it
 * already (parsing it again was 2% of the client).
 */
export function transferOf(record: ServiceRecord, id: string | undefined, source: string, time = Date.parse(record.DATAHORA)): Transfer {
  return new RecordTransfer(record, id, source, time);
}

/**
 * A transfer read from a record. Its identity is computed on first use, not when the record is read: what
 * deduplicates (the poller's streams, the rule engine, a replica sending transfers on) asks for it; `query`, which
 * prints records, never does. Hashing every field was half of what the client does per record beyond fetching
 * and parsing (0.51 of ~1.0 µs; docs/benchmarks-rounds.md, twenty-fourth round). Every transfer the daemon makes is of
 * this one class (`transferOf`), so wherever transfers go, a read of `id` meets one shape.
 */
class RecordTransfer implements Transfer {
  readonly instance: string;
  readonly user: string;
  readonly eventCode: number;
  readonly event: string;
  readonly file: string;
  readonly code: number;
  readonly result: 'success' | 'error';
  readonly size: number;
  readonly message: string;
  readonly tags: string;
  #id: string | undefined;

  constructor(
    readonly record: ServiceRecord,
    id: string | undefined,
    readonly source: string,
    readonly time: number,
  ) {
    this.#id = id;
    this.instance = record.INSTANCE;
    this.user = record.USUARIO;
    this.eventCode = record.EVENTO;
    this.event = eventName(record.EVENTO);
    this.file = record.NOMEARQUIVO;
    this.code = record.RESULTADO;
    this.result = record.RESULTADO === 0 ? 'success' : 'error';
    this.size = record.TAMARQUIVO;
    this.message = record.MENSAGEM;
    this.tags = record.TAGS;
  }

  get id(): string {
    return (this.#id ??= recordIdentity(this.record));
  }
}
