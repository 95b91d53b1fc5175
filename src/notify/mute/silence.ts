import { z } from 'zod';
import { TransferWatchError } from '../../util/errors.js';
import { makeMatcher, matcherMatches, parseMatchers, type Matcher } from '../matcher.js';

/**
 * Silences as in Alertmanager's v2 API: a set of matchers and a time range during which matching
 * alerts are not notified. JSON shape: `{id, matchers: [{name, value, isRegex, isEqual}], startsAt,
 * endsAt, createdBy, comment, updatedAt, status: {state}}` with ISO 8601 UTC times.
 */
export interface SilenceMatcher {
  name: string;
  value: string;
  isRegex: boolean;
  isEqual: boolean;
}

export type SilenceState = 'pending' | 'active' | 'expired';

export interface Silence {
  id: string;
  matchers: SilenceMatcher[];
  startsAt: string;
  endsAt: string;
  createdBy: string;
  comment: string;
  updatedAt: string;
  status: { state: SilenceState };
}

/** What the HTTP server maps GET/POST /api/v1/silences and DELETE /api/v1/silences/:id onto. */
export interface SilenceApi {
  /** Every silence kept (expired ones for a while), active first. */
  list(): Silence[];
  get(id: string): Silence | undefined;
  /** Parse and store a silence (with an `id` of an existing one: replace it). Throws SilenceError → HTTP 400. */
  create(input: unknown): Promise<Silence>;
  /** End a silence now; false when there is no silence with this id (→ HTTP 404). */
  expire(id: string): Promise<boolean>;
}

export class SilenceError extends TransferWatchError {
  constructor(message: string) {
    super('silence_invalid', message);
    this.name = 'SilenceError';
  }
}

/** A silence as kept in memory and in the state file: times in epoch ms. */
export interface StoredSilence {
  id: string;
  matchers: SilenceMatcher[];
  startsAt: number;
  endsAt: number;
  createdBy: string;
  comment: string;
  updatedAt: number;
}

export const storedSilenceSchema = z.object({
  id: z.string().min(1),
  matchers: z.array(z.object({ name: z.string(), value: z.string(), isRegex: z.boolean(), isEqual: z.boolean() })),
  startsAt: z.number(),
  endsAt: z.number(),
  createdBy: z.string(),
  comment: z.string(),
  updatedAt: z.number(),
});

const matcherObject = z.object({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a label name'),
  value: z.string(),
  isRegex: z.boolean().default(false),
  isEqual: z.boolean().default(true),
});

const isoTime = z.iso.datetime({ offset: true }).transform((s) => Date.parse(s));

const silenceInputSchema = z.object({
  id: z.string().min(1).optional(),
  matchers: z.array(z.union([z.string(), matcherObject])).min(1, 'at least one matcher is needed'),
  startsAt: isoTime.optional(),
  endsAt: isoTime,
  createdBy: z.string().trim().min(1, 'createdBy is required'),
  comment: z.string().trim().min(1, 'comment is required'),
});

export interface SilenceInput {
  id: string | undefined;
  matchers: SilenceMatcher[];
  startsAt: number;
  endsAt: number;
  createdBy: string;
  comment: string;
}

/** Parse a POST body into a silence; `now` is the default start. Throws SilenceError with every problem. */
export function parseSilenceInput(input: unknown, now: number): SilenceInput {
  const parsed = silenceInputSchema.safeParse(input);
  if (!parsed.success) {
    throw new SilenceError(parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
  }
  const body = parsed.data;
  const matchers: SilenceMatcher[] = [];
  for (const m of body.matchers) {
    if (typeof m === 'string') {
      let list: Matcher[];
      try {
        list = parseMatchers(m);
      } catch (err) {
        throw new SilenceError((err as Error).message);
      }
      for (const p of list) matchers.push({ name: p.name, value: p.value, isRegex: p.type.endsWith('~'), isEqual: !p.type.startsWith('!') });
    } else {
      matchers.push(m);
    }
  }
  const compiled = matchers.map(toMatcher);
  if (compiled.length === 0) throw new SilenceError('at least one matcher is needed');
  // A silence whose every matcher accepts an empty label would silence every alert.
  if (compiled.every((m) => matcherMatches(m, {}))) {
    throw new SilenceError('at least one matcher must not match the empty string (this silence would silence everything)');
  }
  const startsAt = Math.max(body.startsAt ?? now, now);
  if (body.endsAt <= startsAt) throw new SilenceError('endsAt must be after startsAt and in the future');
  return { id: body.id, matchers, startsAt, endsAt: body.endsAt, createdBy: body.createdBy, comment: body.comment };
}

/** The matcher a silence matcher stands for; throws SilenceError on a bad regex. */
export function toMatcher(m: SilenceMatcher): Matcher {
  const type = m.isRegex ? (m.isEqual ? '=~' : '!~') : m.isEqual ? '=' : '!=';
  try {
    return makeMatcher(m.name, type, m.value);
  } catch (err) {
    throw new SilenceError(`matcher ${m.name}: ${(err as Error).message}`);
  }
}

export function silenceState(s: StoredSilence, now: number): SilenceState {
  if (now >= s.endsAt) return 'expired';
  if (now < s.startsAt) return 'pending';
  return 'active';
}

export function toApiSilence(s: StoredSilence, now: number): Silence {
  return {
    id: s.id,
    matchers: s.matchers.map((m) => ({ ...m })),
    startsAt: new Date(s.startsAt).toISOString(),
    endsAt: new Date(s.endsAt).toISOString(),
    createdBy: s.createdBy,
    comment: s.comment,
    updatedAt: new Date(s.updatedAt).toISOString(),
    status: { state: silenceState(s, now) },
  };
}
