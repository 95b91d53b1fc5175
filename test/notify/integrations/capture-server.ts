import { afterEach, beforeEach } from 'vitest';
import { ManualClock } from '../../../src/util/clock.js';
import { silentLogger, type Logger } from '../../../src/util/logger.js';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CapturedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** A real HTTP server on 127.0.0.1:0 that records requests and answers with queued replies (default 200 ok). */
export class CaptureServer {
  readonly requests: CapturedRequest[] = [];
  private readonly replies: Reply[] = [];
  private readonly server: Server;

  private constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        const reply = this.replies.shift() ?? { status: 200, body: 'ok' };
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? '');
      });
    });
  }

  static async start(): Promise<CaptureServer> {
    const s = new CaptureServer();
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
    return s;
  }

  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  reply(r: Reply): void {
    this.replies.push(r);
  }

  json(i = 0): unknown {
    const req = this.requests[i];
    if (!req) throw new Error(`no request #${i}`);
    return JSON.parse(req.body);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * A fresh capture server for each test of the calling `describe` (started before each, closed after), and the
 * integration deps every HTTP integration test passes: a silent logger, no user templates, a manual clock at `at`.
 */
export function captureServerPerTest(at: number): { server: () => CaptureServer; deps: { logger: Logger; templates: undefined; clock: ManualClock } } {
  let current: CaptureServer | undefined;
  beforeEach(async () => {
    current = await CaptureServer.start();
  });
  afterEach(async () => {
    await current?.close();
  });
  return {
    server: () => {
      if (!current) throw new Error('capture server not started (call captureServerPerTest inside describe)');
      return current;
    },
    deps: { logger: silentLogger(), templates: undefined, clock: new ManualClock(at) },
  };
}
