import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CapturedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A real HTTP receiver that records every request (a stand-in for Slack, a webhook endpoint, ...).
 * `respond` decides each answer, so tests can script 429s and 500s before success.
 */
export async function startCaptureServer(
  respond: (req: CapturedRequest, index: number) => { status: number; headers?: Record<string, string>; body?: string } = () => ({ status: 200, body: 'ok' }),
  /** Called when a request starts arriving, before its body (tests that kill senders track requests in flight). */
  onRequestStart?: () => void,
): Promise<{ url: string; requests: CapturedRequest[]; close(): Promise<void> }> {
  const requests: CapturedRequest[] = [];
  let index = 0;
  const server = http.createServer((req, res) => {
    onRequestStart?.();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const captured = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const answer = respond(captured, index++);
      if (answer.status >= 200 && answer.status < 300) requests.push(captured);
      res.writeHead(answer.status, answer.headers ?? { 'content-type': 'text/plain' });
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
