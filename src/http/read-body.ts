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

/** Deepest nesting of arrays and objects a JSON body may have (a silence is 3 levels deep). */
export const MAX_JSON_DEPTH = 32;

/** Read and parse a JSON body; 400 when it is not JSON or nested too deeply. An empty body is `undefined`. */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const body = await readBody(req, limit);
  if (body.length === 0) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new HttpError(400, 'http_bad_json', `request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  // 64 KiB of `[[[[…` parses fine but overflows the stack of every recursive walk after it (JSON.stringify,
  // schema validation): refused here, with a 400 instead of a 500 and a stack trace in the log.
  if (depthOver(parsed, MAX_JSON_DEPTH)) {
    throw new HttpError(400, 'http_bad_json', `request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  // A NUL or another control character is no text anybody types (a tab and a line break are): PostgreSQL refuses a
  // NUL in text outright (it answered 503 "the history database does not answer"), SQLite kept it, and a terminal or
  // a log reading it back may act on it. Refused alike on every route and store, naming where it is (contract 12a).
  const control = controlCharacterAt(parsed);
  if (control) throw new HttpError(400, 'http_bad_json', `${control.path}: contains the control character U+${control.code.toString(16).toUpperCase().padStart(4, '0')}, which no field takes`);
  return parsed;
}

/** C0 controls but tab, line feed and carriage return, and DEL. */
// eslint-disable-next-line no-control-regex -- finding control characters is what it is for
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** The first string (value or key) of a parsed body holding a control character: its path, and the character. */
function controlCharacterAt(value: unknown): { path: string; code: number } | undefined {
  const stack: Array<{ v: unknown; path: string }> = [{ v: value, path: 'body' }];
  const found = (text: string, path: string) => {
    const m = CONTROL.exec(text);
    return m ? { path, code: m[0].charCodeAt(0) } : undefined;
  };
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      const f = found(v, path);
      if (f) return f;
    } else if (Array.isArray(v)) {
      v.forEach((child, i) => stack.push({ v: child, path: `${path}[${i}]` }));
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, child] of Object.entries(v)) {
        const f = found(k, `${path} key ${JSON.stringify(k.replace(CONTROL, '?'))}`);
        if (f) return f;
        stack.push({ v: child, path: `${path}.${k}` });
      }
    }
  }
  return undefined;
}

/** Whether arrays and objects nest deeper than `max`, walked without recursion. */
function depthOver(value: unknown, max: number): boolean {
  const stack: Array<{ v: unknown; depth: number }> = [{ v: value, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push({ v: child, depth: depth + 1 });
    }
  }
  return false;
}

/**
 * A GET or HEAD with a body: read and drop it within the same bound as any body (413 past it). Node would
 * otherwise drain an unbounded body after the answer to keep the connection usable.
 */
export async function refuseLargeBodyOfRead(req: IncomingMessage): Promise<void> {
  const length = req.headers['content-length'];
  const hasBody = (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
  if (hasBody) await readBody(req);
}
