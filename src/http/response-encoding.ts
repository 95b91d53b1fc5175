import type { IncomingMessage } from 'node:http';
import { constants, gzipSync } from 'node:zlib';
import Negotiator from 'negotiator';

/** Bodies smaller than this go as they are: the gzip header and the work would cost more than they save. */
export const COMPRESS_MIN_BYTES = 1024;

export interface EncodedBody {
  body: Buffer;
  /** `gzip`, or undefined when the body goes as it is. */
  encoding: 'gzip' | undefined;
}

/**
 * The body as the client asked for it: gzip when its Accept-Encoding allows it (Prometheus sends
 * `Accept-Encoding: gzip` on every scrape, as client_golang's handler expects), as it is otherwise.
 *
 * Why: a scrape of 10,000 series is ~1 MB of text; gzipped it is a few tens of KiB, written to the socket at
 * once instead of in many writes that each wait for a turn of the event loop, which a backfill shares. It is
 * compressed here, on the event loop, at the fastest level (~1.3 ms for 1 MB): zlib's asynchronous path hands
 * its output back 16 KiB at a time, each a turn of the loop, and made a scrape during a backfill slower, not
 * faster (docs/benchmarks-rounds.md, tenth round). Accept-Encoding is read with its q-values (`gzip;q=0` refuses it). Pages
 * (HTML) are never compressed, see below.
 */
export function encodeBody(req: IncomingMessage, body: Buffer, contentType: string): EncodedBody {
  if (body.length < COMPRESS_MIN_BYTES || req.headers['accept-encoding'] === undefined) return { body, encoding: undefined };
  // HTML pages carry the form token next to text a visitor's link can put there (filters, names): compressed
  // over TLS, their size would leak the token a guess at a time (BREACH). They are small and go as they are.
  if (contentType.startsWith('text/html')) return { body, encoding: undefined };
  if (new Negotiator(req).encoding(['gzip', 'identity']) !== 'gzip') return { body, encoding: undefined };
  return { body: gzipSync(body, { level: constants.Z_BEST_SPEED }), encoding: 'gzip' };
}
