import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postJson } from '../../../src/notify/integrations/shared/post-json.js';
import { NotifyError } from '../../../src/notify/notification.js';
import { ManualClock } from '../../../src/util/clock.js';
import { rejectionOf } from '../../helpers/rejection.js';
import { CaptureServer } from './capture-server.js';

const clock = new ManualClock(Date.UTC(2026, 10, 27, 8, 0, 0));
const SECRET_PATH = '/hooks/T000/B000/s3cr3t-path';

/** A server that reads requests and never answers them (a receiver hung behind a load balancer). */
async function silentServer(): Promise<{ url: string; close(): Promise<void>; requests: number }> {
  const sockets = new Set<Socket>();
  const state = { requests: 0 };
  const server: Server = createServer(() => void state.requests++);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const failureOf = (work: Promise<unknown>): Promise<NotifyError> => rejectionOf(work, NotifyError);

describe('postJson', () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0)) await c();
  });

  it('posts the body as JSON with the idempotency key and the headers given', async () => {
    const server = await CaptureServer.start();
    cleanup.push(() => server.close());
    server.reply({ status: 202, body: 'x'.repeat(200_000) });
    await postJson(`${server.url}/hook`, { alerts: [{ status: 'firing' }] }, { kind: 'webhook', timeoutMs: 5_000, clock, idempotencyKey: 'n-1', headers: { 'x-team': 'treasury' } });
    await postJson(`${server.url}/hook`, { n: 2 }, { kind: 'webhook', timeoutMs: 5_000, clock });
    expect(server.requests).toHaveLength(2);
    const first = server.requests[0];
    expect(first?.method).toBe('POST');
    expect(first?.headers['content-type']).toBe('application/json');
    expect(first?.headers['idempotency-key']).toBe('n-1');
    expect(first?.headers['x-team']).toBe('treasury');
    expect(first?.headers['user-agent']).toBe('transfer-watch');
    expect(JSON.parse(first?.body ?? '')).toEqual({ alerts: [{ status: 'firing' }] });
    expect(server.requests[1]?.headers['idempotency-key']).toBeUndefined();
  });

  it('gives up on a receiver that never answers after timeoutMs, retryable, naming the timeout and not the secret path', async () => {
    const server = await silentServer();
    cleanup.push(() => server.close());
    const err = await failureOf(postJson(`${server.url}${SECRET_PATH}`, {}, { kind: 'webhook', timeoutMs: 300, clock }));
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('timed out after 300 ms');
    expect(err.message).not.toContain('s3cr3t');
    expect(server.requests).toBe(1);
  });

  it('a refused connection is retryable and named by its code', async () => {
    const server = await silentServer();
    const url = server.url;
    await server.close();
    const err = await failureOf(postJson(`${url}${SECRET_PATH}`, {}, { kind: 'alertmanager', timeoutMs: 5_000, clock }));
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/^alertmanager: POST .* failed: .*ECONNREFUSED/);
    expect(err.message).not.toContain('s3cr3t');
  });

  it('does not follow a redirect: a 3xx is a failed send that retrying does not fix', async () => {
    const target = await CaptureServer.start();
    const server = await CaptureServer.start();
    cleanup.push(() => target.close(), () => server.close());
    server.reply({ status: 302, headers: { location: `${target.url}/elsewhere` } });
    const err = await failureOf(postJson(`${server.url}/hook`, {}, { kind: 'webhook', timeoutMs: 5_000, clock }));
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('answered HTTP 302');
    expect(target.requests).toHaveLength(0);
  });

  it("honours a 429's Retry-After", async () => {
    const server = await CaptureServer.start();
    cleanup.push(() => server.close());
    server.reply({ status: 429, headers: { 'retry-after': '7' } });
    const err = await failureOf(postJson(`${server.url}/hook`, {}, { kind: 'webhook', timeoutMs: 5_000, clock }));
    expect(err.retryable).toBe(true);
    expect(err.retryAfterMs).toBe(7_000);
  });

  it("stops at the caller's abort (shutdown), retryable so the notification stays in the outbox", async () => {
    const server = await silentServer();
    cleanup.push(() => server.close());
    const abort = new AbortController();
    const sending = postJson(`${server.url}/hook`, {}, { kind: 'webhook', timeoutMs: 60_000, clock, signal: abort.signal, secrets: ['tok-123'] });
    await new Promise((r) => setTimeout(r, 100));
    abort.abort();
    const err = await failureOf(sending);
    expect(err.retryable).toBe(true);
    expect(err.message).not.toContain('timed out');
  });
});
