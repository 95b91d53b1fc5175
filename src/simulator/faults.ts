import { z } from 'zod';

/**
 * Misbehaviour the simulator can be told to show, so clients can be tested against the failures a real
 * service produces. Rates are shares of report requests (or records) in [0, 1]; the choice of which request
 * misbehaves comes from a generator seeded with the simulator's seed, so a run is repeatable.
 */
export const faultsSchema = z
  .object({
    /** Every request (token, report, not control) answers 503. */
    down: z.boolean(),
    /** One-shot: the tokens issued so far stop working (401); the flag does not stay set. */
    revokeTokens: z.boolean(),
    /** Every report request answers 401, whatever the token: a client's retry with a fresh token fails too. */
    rejectTokens: z.boolean(),
    /** Share of report requests answered 500. */
    status500Rate: z.number().min(0).max(1),
    /** Delay before answering a report request (ms); applies to a `delayRate` share of them. */
    delayMs: z.number().int().min(0).max(600_000),
    delayRate: z.number().min(0).max(1),
    /** Share of report pages sent with a truncated (malformed) JSON body and status 200. */
    malformedRate: z.number().min(0).max(1),
    /** Revoke every token after each N report requests (0 = never). */
    tokenRevokeEvery: z.number().int().min(0),
    /** Share of pages whose `next` has a quirk: dropped filters, empty `events=`, absolute URL, path-relative URL. */
    nextQuirkRate: z.number().min(0).max(1),
    /** Share of records with integers as numeric strings and/or a zone-less DATAHORA. */
    recordQuirkRate: z.number().min(0).max(1),
    /**
     * Hostile: every page of failures carries one more failed record whose NOMEARQUIVO and MENSAGEM are this many
     * characters long (0 = off). A client must bound what it holds of a record.
     */
    hugeFieldChars: z.number().int().min(0).max(64 * 1024 * 1024),
    /** Hostile: every report page carries this many records whatever its `limit`, streamed (0 = off). */
    hugePageRecords: z.number().int().min(0).max(100_000_000),
    /** Hostile: every page of failures has a `next` with a new index, so the pagination never ends. */
    endlessNext: z.boolean(),
    /**
     * Spans of the history the service cannot serve: a report request whose [start, end] (epoch ms) overlaps one
     * answers 500, every time (a month too large to read, a partition lost), while the rest of the history answers.
     */
    failWindows: z.array(z.object({ start: z.number().int(), end: z.number().int() }).strict()).max(100),
  })
  .strict();

export type Faults = z.infer<typeof faultsSchema>;

/** A partial update, as `setFaults` and `POST /_sim/faults` take it. */
export const faultsUpdateSchema = faultsSchema.partial().strict();

export const NO_FAULTS: Readonly<Faults> = {
  down: false,
  revokeTokens: false,
  rejectTokens: false,
  status500Rate: 0,
  delayMs: 0,
  delayRate: 1,
  malformedRate: 0,
  tokenRevokeEvery: 0,
  nextQuirkRate: 0,
  recordQuirkRate: 0,
  hugeFieldChars: 0,
  hugePageRecords: 0,
  endlessNext: false,
  failWindows: [],
};
