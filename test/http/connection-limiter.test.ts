import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionLimiter } from '../../src/http/connection-limiter.js';

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function start(limiter: ConnectionLimiter, slowMs = 0): Promise<number> {
  server = createServer((req, res) => {
    setTimeout(() => res.end(req.url === '/healthz' ? 'ok\n' : 'slow\n'), req.url === '/slow' ? slowMs : 0);
  });
  limiter.attach(server);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return (server.address() as AddressInfo).port;
}

/** A socket that connects and sends nothing (or half a request line). */
async function idle(port: number, partial = ''): Promise<Socket> {
  const s = connect(port, '127.0.0.1');
  s.on('error', () => undefined);
  sockets.push(s);
  await new Promise((r) => s.once('connect', r));
  if (partial) s.write(partial);
  return s;
}

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const closed = (s: Socket) => s.destroyed || s.readyState === 'closed';

describe('ConnectionLimiter', () => {
  it('at the limit, a new connection evicts the oldest idle one (silent or half-sent), so /healthz is answered', async () => {
    const limiter = new ConnectionLimiter({ max: 10, maxPerPeer: 10 });
    const port = await start(limiter);
    const held: Socket[] = [];
    for (let i = 0; i < 10; i++) held.push(await idle(port, i % 2 === 0 ? '' : 'GET /slowloris HTTP/1.1\r\nHost: x\r\n'));
    await new Promise((r) => setTimeout(r, 50));
    expect(limiter.size).toBe(10);
    expect(await get(port, '/healthz')).toEqual({ status: 200, body: 'ok\n' });
    await new Promise((r) => setTimeout(r, 50));
    expect(limiter.evicted).toBe(1);
    expect(closed(held[0]!)).toBe(true);
    expect(held.slice(1).some(closed)).toBe(false);
    expect(limiter.size).toBeLessThanOrEqual(10);
  });

  it('never evicts a connection that is answering a request; refuses the new one when all are busy', async () => {
    const limiter = new ConnectionLimiter({ max: 3, maxPerPeer: 3 });
    const port = await start(limiter, 400);
    const slow = [get(port, '/slow'), get(port, '/slow'), get(port, '/slow')];
    await new Promise((r) => setTimeout(r, 100));
    await expect(get(port, '/healthz')).rejects.toThrow();
    expect(limiter.refused).toBe(1);
    for (const r of await Promise.all(slow)) expect(r.status).toBe(200);
    expect(await get(port, '/healthz')).toEqual({ status: 200, body: 'ok\n' });
  });

  it('caps one peer: past its share, its own oldest idle connection goes first', async () => {
    const limiter = new ConnectionLimiter({ max: 100, maxPerPeer: 4 });
    const port = await start(limiter);
    const held: Socket[] = [];
    for (let i = 0; i < 6; i++) held.push(await idle(port));
    await new Promise((r) => setTimeout(r, 50));
    expect(limiter.size).toBe(4);
    expect(limiter.evicted).toBe(2);
    expect(held.slice(0, 2).every(closed)).toBe(true);
  });

  it('closes a connection whose first request has not begun in time (Node\'s headersTimeout waits for a first byte)', async () => {
    const limiter = new ConnectionLimiter({ max: 10, maxPerPeer: 10, firstRequestTimeoutMs: 300 });
    const port = await start(limiter);
    const silent = await idle(port);
    const asking = await idle(port);
    asking.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 600));
    expect(closed(silent)).toBe(true);
    expect(closed(asking)).toBe(false);
  });
});
