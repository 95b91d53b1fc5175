import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { StateStore } from '../../state/state-store.js';

export const ACK_LINK_KEY_STATE_KEY = 'ack-link-key';
/** Alerts one link names at most: a message about more names the first ones (the page acknowledges the rest). */
export const MAX_LINK_ALERTS = 50;

const payloadSchema = z.tuple([z.array(z.string().regex(/^[0-9a-zA-Z_:.-]{1,128}$/)).min(1).max(MAX_LINK_ALERTS), z.number()]);

/**
 * The signed links of email messages (contract 14): `/-/ack?t=TOKEN` names the firing alerts a message told and is
 * signed with a key of the cluster (kept in the shared state store, made at the first use), so any replica can check
 * it and nobody can forge one for other alerts. A link is valid while one of its alerts still fires (the page says
 * so otherwise); it carries no secret of the daemon, and acknowledging is all it can do.
 */
export class AckLinks {
  private constructor(private readonly key: Buffer) {}

  /** The key from the store, made and written there the first time (the first writer's wins, across replicas). */
  static async load(state: StateStore): Promise<AckLinks> {
    const made = randomBytes(32).toString('base64');
    const parse = (raw: unknown): string | undefined => (typeof raw === 'string' && raw.length >= 40 ? raw : undefined);
    let key = parse(await state.load(ACK_LINK_KEY_STATE_KEY));
    if (key === undefined) {
      if (state.update) key = parse(await state.update(ACK_LINK_KEY_STATE_KEY, (current) => parse(current) ?? made));
      else {
        await state.save(ACK_LINK_KEY_STATE_KEY, made);
        key = made;
      }
    }
    return new AckLinks(Buffer.from(key ?? made, 'base64'));
  }

  /** A token naming these alerts (at most MAX_LINK_ALERTS of them), made at `at`. */
  sign(fingerprints: readonly string[], at: number): string {
    const body = Buffer.from(JSON.stringify([[...new Set(fingerprints)].slice(0, MAX_LINK_ALERTS), at]), 'utf8').toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  /** The alerts a token names, or undefined for a token this cluster did not sign. */
  verify(token: string): { fingerprints: string[]; at: number } | undefined {
    if (token.length > 8_192) return undefined;
    const [body, mac, ...rest] = token.split('.');
    if (body === undefined || mac === undefined || rest.length > 0) return undefined;
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const [fingerprints, at] = payloadSchema.parse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
      return { fingerprints, at };
    } catch {
      return undefined;
    }
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(`tw-ack-link.${body}`).digest('base64url');
  }
}
