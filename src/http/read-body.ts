import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error.js';

/** Largest request body accepted; silences and reloads are tiny, so anything bigger is a mistake or abuse. */
export const MAX_BODY_BYTES = 64 * 1024;

/** Read a request body of at most `limit` bytes; 413 as soon as it is known to be larger. */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    throw new HttpError(413, 'http_body_too_large', `request body larger than ${limit} bytes`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    total += buf.length;
    if (total > limit) throw new HttpError(413, 'http_body_too_large', `request body larger than ${limit} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

/** Read and parse a JSON body; 400 when it is not JSON. An empty body is `undefined`. */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const body = await readBody(req, limit);
  if (body.length === 0) return undefined;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return parsed;
  } catch (err) {
    throw new HttpError(400, 'http_bad_json', `request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}
