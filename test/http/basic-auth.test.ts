import type { IncomingMessage } from 'node:http';
import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BasicAuthenticator } from '../../src/http/security/basic-auth.js';
import { silentLogger } from '../../src/util/logger.js';

const HASH = bcrypt.hashSync('right', 4);

function request(user: string | undefined, password = ''): IncomingMessage {
  const headers = user === undefined ? {} : { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
  return { headers } as IncomingMessage;
}

async function outcome(p: Promise<string>): Promise<number | string> {
  try {
    return await p;
  } catch (err) {
    return (err as { status: number }).status;
  }
}

describe('BasicAuthenticator under guessing', () => {
  afterEach(() => vi.restoreAllMocks());

  it('runs one bcrypt round at a time and at most two per peer: 100 parallel guesses from one peer cost 2 rounds, the rest get 429 at once', async () => {
    let running = 0;
    let maxRunning = 0;
    const compare = vi.spyOn(bcrypt, 'compare').mockImplementation(async () => {
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((r) => setTimeout(r, 20));
      running -= 1;
      return false;
    });
    let failures = 0;
    const auth = new BasicAuthenticator({ alice: HASH }, silentLogger(), { onFailure: () => failures++ });
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => outcome(auth.authenticate(request('alice', `guess-${i}`), '10.0.0.9'))));
    expect(compare).toHaveBeenCalledTimes(2);
    expect(maxRunning).toBe(1);
    expect(results.filter((r) => r === 401)).toHaveLength(2);
    expect(results.filter((r) => r === 429)).toHaveLength(98);
    expect(failures).toBe(100);
  });

  it('answers a pair that already failed from memory (no bcrypt), and a right one still gets in', async () => {
    const compare = vi.spyOn(bcrypt, 'compare');
    const auth = new BasicAuthenticator({ alice: HASH }, silentLogger());
    expect(await outcome(auth.authenticate(request('alice', 'wrong'), 'p1'))).toBe(401);
    expect(await outcome(auth.authenticate(request('alice', 'wrong'), 'p2'))).toBe(401);
    expect(compare).toHaveBeenCalledTimes(1);
    expect(await outcome(auth.authenticate(request('alice', 'right'), 'p3'))).toBe('alice');
    expect(await outcome(auth.authenticate(request('alice', 'right'), 'p3'))).toBe('alice');
    expect(compare).toHaveBeenCalledTimes(2);
  });

  it('counts a request without credentials as a failure (the metric says "wrong or missing")', async () => {
    let failures = 0;
    const auth = new BasicAuthenticator({ alice: HASH }, silentLogger(), { onFailure: () => failures++ });
    expect(await outcome(auth.authenticate(request(undefined), 'p1'))).toBe(401);
    expect(failures).toBe(1);
  });
});
