import { z } from 'zod';
import type { AlertAck } from '../../alerts/alert.js';
import { TransferWatchError } from '../../util/errors.js';
import { parseMatchers } from '../matcher.js';
import type { SilenceMatcher } from '../mute/silence.js';

/**
 * An acknowledgement (contract 14): someone says "I have it" of the alerts firing now that its matchers select (or
 * of the alerts named by fingerprint). It holds those alerts only: an alert that fires later is news, and each alert
 * leaves the ack when it resolves; the ack ends when the last of them has. While it holds, its alerts are not
 * notified again by `repeat_interval` and not escalated; their resolution is still told, naming who acknowledged.
 */
export interface StoredAck {
  id: string;
  /** The alerts it holds: those firing when it was made, while they fire. */
  fingerprints: string[];
  /** Its alerts that resolved while it held them (their resolution names it). */
  resolved?: string[] | undefined;
  /** What selected them, as given (none when given by fingerprint). */
  matchers: SilenceMatcher[];
  by: string;
  comment: string;
  at: number;
  /** When it ended: its last alert resolved, or someone took it back (`endedBy`). */
  endedAt?: number | undefined;
  endedBy?: string | undefined;
}

export const storedAckSchema = z.object({
  id: z.string().min(1),
  fingerprints: z.array(z.string()),
  resolved: z.array(z.string()).optional(),
  matchers: z.array(z.object({ name: z.string(), value: z.string(), isRegex: z.boolean(), isEqual: z.boolean() })),
  by: z.string(),
  comment: z.string(),
  at: z.number(),
  endedAt: z.number().optional(),
  endedBy: z.string().optional(),
});

/** What an alert carries while acknowledged (`/api/v1/alerts`, the page, messages). */
export type AckMark = AlertAck;

/** The JSON of `/api/v1/acks`. */
export interface ApiAck {
  id: string;
  fingerprints: string[];
  matchers: SilenceMatcher[];
  by: string;
  comment: string;
  at: string;
  state: 'active' | 'ended';
  endedAt: string | null;
  endedBy: string | null;
}

export class AckError extends TransferWatchError {
  constructor(code: 'ack_invalid' | 'ack_no_alert', message: string) {
    super(code, message);
    this.name = 'AckError';
  }
}

const matcherObject = z.object({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a label name'),
  value: z.string(),
  isRegex: z.boolean().default(false),
  isEqual: z.boolean().default(true),
});

const ackInputSchema = z
  .strictObject({
    matchers: z.array(z.union([z.string(), matcherObject])).min(1, 'at least one matcher is needed').optional(),
    fingerprints: z.array(z.string().min(1).max(64)).min(1, 'at least one fingerprint is needed').max(10_000).optional(),
    by: z.string().trim().min(1, 'by is required').max(200),
    comment: z.string().trim().max(2_000).default(''),
  })
  .refine((b) => (b.matchers === undefined) !== (b.fingerprints === undefined), 'give either matchers or fingerprints');

export interface AckInput {
  matchers: SilenceMatcher[];
  fingerprints: string[] | undefined;
  by: string;
  comment: string;
}

/** Parse a POST body; throws AckError (HTTP 400) with every problem. */
export function parseAckInput(input: unknown): AckInput {
  const parsed = ackInputSchema.safeParse(input);
  if (!parsed.success) throw new AckError('ack_invalid', parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
  const body = parsed.data;
  const matchers: SilenceMatcher[] = [];
  for (const m of body.matchers ?? []) {
    if (typeof m !== 'string') {
      matchers.push(m);
      continue;
    }
    try {
      for (const p of parseMatchers(m)) matchers.push({ name: p.name, value: p.value, isRegex: p.type.endsWith('~'), isEqual: !p.type.startsWith('!') });
    } catch (err) {
      throw new AckError('ack_invalid', `matchers: ${(err as Error).message}`);
    }
  }
  return { matchers, fingerprints: body.fingerprints, by: body.by, comment: body.comment };
}

export function toApiAck(a: StoredAck): ApiAck {
  return {
    id: a.id,
    fingerprints: [...a.fingerprints],
    matchers: a.matchers.map((m) => ({ ...m })),
    by: a.by,
    comment: a.comment,
    at: new Date(a.at).toISOString(),
    state: a.endedAt === undefined ? 'active' : 'ended',
    endedAt: a.endedAt === undefined ? null : new Date(a.endedAt).toISOString(),
    endedBy: a.endedBy ?? null,
  };
}
