import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addSilence, expireSilence, formatSilenceTable, listSilences, registerSilence, SilenceRequestError } from '../../src/cli/silence.js';
import { SilenceError } from '../../src/notify/mute/silence.js';
import { SilenceStore } from '../../src/notify/mute/silence-store.js';
import { MemoryStateStore } from '../../src/state/state-store.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

// A stand-in for the daemon's silence endpoints, backed by the real SilenceStore.
describe('silence command against a daemon', () => {
  const store = new SilenceStore(systemClock, new MemoryStateStore(), silentLogger());
  let server: Server;
  let url: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const send = (status: number, value: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(value));
        };
        const path = req.url ?? '';
        if (req.method === 'GET' && path === '/api/v1/silences') return send(200, { silences: store.list() });
        if (req.method === 'POST' && path === '/api/v1/silences') {
          store.create(JSON.parse(body) as unknown).then(
            (s) => send(200, s),
            (err: unknown) => send(err instanceof SilenceError ? 400 : 500, { error: (err as Error).message }),
          );
          return;
        }
        const m = /^\/api\/v1\/silences\/([^/]+)$/.exec(path);
        if (req.method === 'DELETE' && m?.[1]) {
          void store.expire(decodeURIComponent(m[1])).then((ok) => (ok ? send(200, {}) : send(404, { error: 'silence not found' })));
          return;
        }
        send(404, { error: 'not found' });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('adds, lists and expires a silence', async () => {
    const now = Date.now();
    const s = await addSilence({ url }, { matchers: ['alertname="DailyStatementMissing"', 'user=~"BANK.*"'], durationMs: 2 * 3_600_000, comment: 'holiday', author: 'ana', now });
    expect(s.status.state).toBe('active');
    expect(Date.parse(s.endsAt)).toBe(now + 2 * 3_600_000);
    const list = await listSilences({ url: `${url}/` });
    expect(list.map((x) => x.id)).toContain(s.id);
    const table = formatSilenceTable(list);
    expect(table).toContain('ENDS (UTC)');
    expect(table).toContain('alertname="DailyStatementMissing", user=~"BANK.*"');
    await expireSilence({ url }, s.id);
    expect((await listSilences({ url })).find((x) => x.id === s.id)?.status.state).toBe('expired');
  });

  it('reports the daemon’s refusal with its status', async () => {
    const bad = await addSilence({ url }, { matchers: ['alertname=="x'], durationMs: 60_000, comment: 'c', author: 'a', now: Date.now() }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(SilenceRequestError);
    expect((bad as SilenceRequestError).status).toBe(400);
    const missing = await expireSilence({ url }, 'no-such-id').catch((e: unknown) => e);
    expect((missing as SilenceRequestError).status).toBe(404);
  });

  it('names a daemon it cannot reach and the cause, never the password', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const down = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const err = await listSilences({ url: down, user: 'ana', password: 'pw-s3cr3t' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'daemon_unreachable' });
    expect((err as Error).message).toMatch(new RegExp(`^cannot reach the daemon at ${down} \\(ECONNREFUSED: `));
    expect((err as Error).message).not.toContain('pw-s3cr3t');
  });

  it('runs as a command: add prints the id, list shows it, errors set exit codes', async () => {
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    const errSpy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const program = new Command().exitOverride();
      registerSilence(program);
      await program.parseAsync(['node', 'tw', 'silence', 'add', '--url', url, '--duration', '30m', '--comment', 'deploy', '--author', 'bo', 'alertname="Deploy"']);
      const id = out.join('').trim();
      expect(store.get(id)?.createdBy).toBe('bo');
      expect(process.exitCode).toBe(0);
      await program.parseAsync(['node', 'tw', 'silence', 'expire', '--url', url, 'missing-id']);
      expect(process.exitCode).toBe(1);
      await program.parseAsync(['node', 'tw', 'silence', 'list', '--url', 'http://127.0.0.1:1']);
      expect(process.exitCode).toBe(2);
    } finally {
      spy.mockRestore();
      errSpy.mockRestore();
      process.exitCode = 0;
    }
  });
});
