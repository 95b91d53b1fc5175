import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Connections held at once, in all. High enough that a few hundred silent sockets (each costs a file descriptor
 * and a few KB) leave room for a prober, a scrape and the page; the headers timeout closes silent ones.
 */
export const MAX_CONNECTIONS = 1_024;
/** Connections one peer address may hold at once: one address cannot take every slot. */
export const MAX_CONNECTIONS_PER_PEER = 512;

interface Tracked {
  socket: Socket;
  peer: string;
  /** A request is being answered on it: never evicted. */
  busy: boolean;
  /** Closes it if its first request has not begun in time. */
  silence: NodeJS.Timeout | undefined;
}

/**
 * Bounds connections without letting a flood starve health checks.
 *
 * Node's own `server.maxConnections` (256 here before) dropped every new socket once the limit was reached, so
 * 256 sockets that send nothing kept `/healthz` unreachable until the headers timeout closed them (45 s were
 * measured). Now the bounds are far above what silent sockets must reach to matter, and a new connection over
 * one evicts the oldest connection that is not answering a request (idle keep-alive, or one that has not
 * finished sending its headers: exactly what a slow-loris holds), first of the same peer, so a prober or a scrape
 * always gets a socket (it is the newest; it is answered before it could become the oldest); only when every
 * connection is busy answering is the new one refused. Sockets are keyed by their remote address and port, which
 * the TLS socket of an HTTPS request shares with the TCP socket the server accepted.
 */
export class ConnectionLimiter {
  /** In accept order: the first idle entry is the oldest idle connection. */
  private readonly sockets = new Map<string, Tracked>();
  private readonly perPeer = new Map<string, number>();
  evicted = 0;
  refused = 0;

  private readonly max: number;
  private readonly maxPerPeer: number;
  private readonly firstRequestTimeoutMs: number;

  constructor(
    opts: {
      max?: number;
      maxPerPeer?: number;
      /**
       * A connection whose first request has not begun within this is closed. Node's `headersTimeout` starts only
       * with the first byte, so a socket that never sends one lived until something else closed it.
       */
      firstRequestTimeoutMs?: number;
    } = {},
  ) {
    this.max = opts.max ?? MAX_CONNECTIONS;
    this.maxPerPeer = opts.maxPerPeer ?? MAX_CONNECTIONS_PER_PEER;
    this.firstRequestTimeoutMs = opts.firstRequestTimeoutMs ?? 15_000;
  }

  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.accept(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.requestStarted(req, res));
  }

  get size(): number {
    return this.sockets.size;
  }

  private accept(socket: Socket): void {
    const key = keyOf(socket);
    const peer = socket.remoteAddress ?? '';
    if ((this.perPeer.get(peer) ?? 0) >= this.maxPerPeer && !this.evictIdle(peer)) return this.refuse(socket);
    if (this.sockets.size >= this.max && !this.evictIdle(peer) && !this.evictIdle(undefined)) return this.refuse(socket);
    const entry: Tracked = { socket, peer, busy: false, silence: undefined };
    entry.silence = setTimeout(() => {
      if (!entry.busy) socket.destroy();
    }, this.firstRequestTimeoutMs);
    entry.silence.unref();
    this.sockets.set(key, entry);
    this.perPeer.set(peer, (this.perPeer.get(peer) ?? 0) + 1);
    socket.once('close', () => this.forget(key, socket));
  }

  private requestStarted(req: IncomingMessage, res: ServerResponse): void {
    const entry = this.sockets.get(keyOf(req.socket));
    if (!entry) return;
    entry.busy = true;
    // From now on Node's own timeouts apply (keep-alive idle, headers of the next request).
    clearTimeout(entry.silence);
    entry.silence = undefined;
    const done = (): void => {
      entry.busy = false;
      // Back to the end of the line: the oldest idle connection is the one idle the longest.
      const key = keyOf(entry.socket);
      if (this.sockets.get(key) === entry) {
        this.sockets.delete(key);
        this.sockets.set(key, entry);
      }
    };
    res.once('finish', done);
    res.once('close', done);
  }

  /** Close the oldest idle connection (of `peer`, or of anyone); false when there is none. */
  private evictIdle(peer: string | undefined): boolean {
    for (const [key, entry] of this.sockets) {
      if (entry.busy || (peer !== undefined && entry.peer !== peer)) continue;
      this.forget(key, entry.socket);
      entry.socket.destroy();
      this.evicted += 1;
      return true;
    }
    return false;
  }

  private refuse(socket: Socket): void {
    this.refused += 1;
    socket.destroy();
  }

  private forget(key: string, socket: Socket): void {
    const entry = this.sockets.get(key);
    if (!entry || entry.socket !== socket) return;
    clearTimeout(entry.silence);
    this.sockets.delete(key);
    const n = (this.perPeer.get(entry.peer) ?? 1) - 1;
    if (n <= 0) this.perPeer.delete(entry.peer);
    else this.perPeer.set(entry.peer, n);
  }
}

function keyOf(socket: Socket): string {
  return `${socket.remoteAddress ?? ''}|${socket.remotePort ?? ''}`;
}
