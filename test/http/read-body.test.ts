import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/http/http-error.js';
import { readJsonBody } from '../../src/http/read-body.js';

const body = (text: string): IncomingMessage => Object.assign(Readable.from([Buffer.from(text)]), { headers: {} }) as unknown as IncomingMessage;

async function refusal(text: string): Promise<HttpError | undefined> {
  return readJsonBody(body(text)).then(
    () => undefined,
    (err: unknown) => err as HttpError,
  );
}

describe('a JSON request body', () => {
  it('with a NUL or another control character anywhere is refused with 400 naming where (contract 12a)', async () => {
    // The excuse that PostgreSQL answered with 503 ("the history database does not answer"): a NUL in the reason.
    const nul = await refusal('{"rule":"R","local_date":"2026-11-02","reason":"bank\\u0000 holiday"}');
    expect(nul).toBeInstanceOf(HttpError);
    expect(nul?.status).toBe(400);
    expect(nul?.message).toBe('body.reason: contains the control character U+0000, which no field takes');
    expect((await refusal('{"key":{"user":"BANK\\u001b[31m"}}'))?.message).toBe('body.key.user: contains the control character U+001B, which no field takes');
    expect((await refusal('{"matchers":[{"name":"a","value":"\\u007f"}]}'))?.message).toBe('body.matchers[0].value: contains the control character U+007F, which no field takes');
    expect((await refusal('{"a\\u0001b":1}'))?.message).toBe('body key "a?b": contains the control character U+0001, which no field takes');
  });

  it('keeps tabs and line breaks, which people type', async () => {
    await expect(readJsonBody(body('{"reason":"line one\\nline two\\tand a tab\\r\\n"}'))).resolves.toEqual({ reason: 'line one\nline two\tand a tab\r\n' });
  });
});
