/**
 * A bench child: the dense history served as a fast service would, from pages already serialised. It runs the
 * simulator in this process and answers each request from a cache of the simulator's answers, filled on first
 * use (the parent reads everything once before it measures): the reading side then measures the client, not the
 * simulator's generation and JSON encoding on the same two cores' event loop. Prints `{"url","start","end"}`.
 * A second argument makes it a slower service: each page is answered that many ms after it was asked for (a
 * database behind the service, a longer network), the token at once.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { denseHistory } from './dense-history.js';
import { exitWithParent } from './exit-with-parent.js';

const minutes = Number(process.argv[2] ?? '1');
const answerDelayMs = Number(process.argv[3] ?? '0');
const { sim, history } = await denseHistory(minutes);

interface Answer {
  status: number;
  type: string;
  body: Buffer;
}
const cache = new Map<string, Answer>();

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const server = createServer((req, res) => {
  void (async () => {
    const body = await bodyOf(req);
    // The token answer and every page, by request; the Authorization header is left out of the key on purpose
    // (each reader gets its own token, the pages are the same).
    const key = `${req.method ?? 'GET'} ${req.url ?? '/'} ${body.toString('utf8')}`;
    let answer = cache.get(key);
    if (!answer) {
      const upstream = await fetch(`${sim.url}${req.url ?? '/'}`.replace(/([^:])\/\//g, '$1/'), {
        method: req.method ?? 'GET',
        headers: Object.fromEntries(Object.entries(req.headers).filter(([k, v]) => typeof v === 'string' && k !== 'host' && k !== 'content-length')) as Record<string, string>,
        ...(body.length > 0 ? { body } : {}),
      });
      // `next` links name the host they were asked on: ask the simulator as this server.
      const text = (await upstream.text()).split(sim.url.replace(/\/$/, '')).join(`http://${req.headers.host ?? ''}`);
      answer = { status: upstream.status, type: upstream.headers.get('content-type') ?? 'application/json', body: Buffer.from(text) };
      if (upstream.status === 200) cache.set(key, answer);
    }
    if (answerDelayMs > 0 && req.method === 'GET') await sleep(answerDelayMs);
    res.writeHead(answer.status, { 'content-type': answer.type, 'content-length': answer.body.length });
    res.end(answer.body);
  })().catch((err: unknown) => {
    res.writeHead(500);
    res.end(String(err));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}`, start: history.start, end: history.end })}\n`);
});
const stop = (): Promise<unknown> => {
  server.close();
  return sim.close();
};
process.on('SIGTERM', () => void stop().finally(() => process.exit(0)));
exitWithParent(stop);
