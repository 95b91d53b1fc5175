import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * A local stand-in for Slack, over real HTTP and a real WebSocket, speaking what transfer-watch uses of it:
 * - incoming webhooks (`POST /services/…`): the messages posted, as JSON;
 * - `POST /api/apps.connections.open` (Web API, app token as bearer): answers the WebSocket URL of Socket Mode;
 * - the Socket Mode WebSocket: `hello` at connection, server pings, `interactive` envelopes (`click`) that the client
 *   must acknowledge with `{envelope_id}`;
 * - a message's `response_url`: what the app said back to the channel.
 * Protocol: https://api.slack.com/apis/socket-mode (envelopes, acknowledgements, hello).
 */
export async function startSlackDouble(): Promise<{
  url: string;
  messages(): unknown[];
  /** The Authorization headers apps.connections.open was called with. */
  opened(): string[];
  sockets(): number;
  responses(): Array<Record<string, unknown>>;
  /** A click on a button of a message, as Slack sends it; resolves 'acknowledged' when the app acks the envelope. */
  click(user: { id: string; username: string }, value: string): Promise<'acknowledged' | 'not acknowledged'>;
  close(): Promise<void>;
}> {
  const messages: unknown[] = [];
  const opened: string[] = [];
  const responses: Array<Record<string, unknown>> = [];
  const sockets = new Set<WebSocket>();
  const acks = new Map<string, () => void>();
  const body = (req: IncomingMessage): Promise<string> =>
    new Promise((resolve) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => resolve(text));
    });
  const server = createServer((req, res) => {
    void (async () => {
      const text = await body(req);
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (req.method === 'POST' && path.startsWith('/services/')) {
        messages.push(JSON.parse(text));
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      } else if (req.method === 'POST' && path === '/api/apps.connections.open') {
        opened.push(String(req.headers.authorization ?? ''));
        if (!String(req.headers.authorization ?? '').startsWith('Bearer xapp-')) send(200, { ok: false, error: 'invalid_auth' });
        else send(200, { ok: true, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/link/?ticket=${randomUUID()}&app_id=A0TEST` });
      } else if (req.method === 'POST' && path.startsWith('/response/')) {
        responses.push(JSON.parse(text) as Record<string, unknown>);
        send(200, { ok: true });
      } else send(404, { ok: false, error: 'unknown_method' });
    })();
  });
  const wss = new WebSocketServer({ server, path: '/link/' });
  wss.on('connection', (ws) => {
    sockets.add(ws);
    ws.send(JSON.stringify({ type: 'hello', num_connections: sockets.size, debug_info: { host: 'local-double', approximate_connection_time: 3600 }, connection_info: { app_id: 'A0TEST' } }));
    // Slack pings its clients; the SDK reconnects when it hears none for 30 s.
    const ping = setInterval(() => ws.ping(), 5_000);
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { envelope_id?: string };
      if (m.envelope_id) acks.get(m.envelope_id)?.();
    });
    ws.on('close', () => {
      clearInterval(ping);
      sockets.delete(ws);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let responseSeq = 0;
  return {
    url,
    messages: () => [...messages],
    opened: () => [...opened],
    sockets: () => sockets.size,
    responses: () => [...responses],
    click(user, value) {
      const socket = [...sockets][0];
      if (!socket) return Promise.reject(new Error('no Socket Mode connection'));
      const envelopeId = randomUUID();
      const acknowledged = new Promise<'acknowledged' | 'not acknowledged'>((resolve) => {
        const timer = setTimeout(() => resolve('not acknowledged'), 3_000);
        acks.set(envelopeId, () => {
          clearTimeout(timer);
          resolve('acknowledged');
        });
      });
      socket.send(
        JSON.stringify({
          envelope_id: envelopeId,
          type: 'interactive',
          accepts_response_payload: false,
          payload: {
            type: 'block_actions',
            user: { id: user.id, username: user.username, name: user.username, team_id: 'T000' },
            api_app_id: 'A0TEST',
            container: { type: 'message', channel_id: 'C000', is_ephemeral: false },
            actions: [{ type: 'button', action_id: 'tw_ack', block_id: 'b1', value, action_ts: String(Date.now() / 1000) }],
            response_url: `${url}/response/${++responseSeq}`,
            trigger_id: randomUUID(),
          },
        }),
      );
      return acknowledged;
    },
    async close() {
      for (const s of sockets) s.terminate();
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
