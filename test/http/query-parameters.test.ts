import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/http/http-error.js';
import { encodeCursor, parseHistoryRequest } from '../../src/http/history-routes.js';
import { slaHandlers, type SlaSource } from '../../src/http/sla-routes.js';

const req = (url: string): IncomingMessage => ({ url, headers: {} }) as IncomingMessage;

async function status(fn: () => unknown): Promise<{ status: number; message: string }> {
  try {
    await fn();
    return { status: 200, message: '' };
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status, message: err.message };
    throw err;
  }
}

/** A ledger that fails the test if a query reaches it: a bad request never goes to the database. */
const untouchable: SlaSource = {
  ledger: new Proxy({}, { get: () => () => Promise.reject(new Error('the database was asked')) }) as SlaSource['ledger'],
  objective: () => undefined,
};

describe('query parameters no database takes', () => {
  it('a NUL (or another control character) in a history parameter is a 400 naming the parameter', async () => {
    for (const [param, value] of [
      ['filter', 'user="a\u0000b"'],
      ['fingerprint', 'ab\u0000'],
      ['cursor', 'x\u0000'],
    ] as const) {
      const r = await status(() => parseHistoryRequest(req(`/api/v1/history/alerts?${param}=${encodeURIComponent(value)}`), 0));
      expect(r, param).toEqual({ status: 400, message: `${param}: contains a control character (such as NUL)` });
    }
  });

  it('a cursor whose id holds a NUL is not one this daemon gave', async () => {
    const forged = encodeCursor({ at: 1, id: 'a\u0000' }) ?? '';
    expect(await status(() => parseHistoryRequest(req(`/api/v1/history/alerts?cursor=${forged}`), 0))).toMatchObject({ status: 400, message: expect.stringContaining('cursor:') });
  });

  it('SLA parameters: NUL in rule= is a 400 naming it; a numeric cursor is digits only', async () => {
    const sla = slaHandlers(() => untouchable);
    expect(await status(() => sla.occurrences(req(`/api/v1/sla/occurrences?from=2026-11-01&to=2026-11-30&rule=${encodeURIComponent('A\u0000')}`)))).toEqual({
      status: 400,
      message: 'rule: contains a control character (such as NUL)',
    });
    for (const cursor of ['', '%2012%20', '0x10', '1e3', '-1', '1.5']) {
      expect(await status(() => sla.occurrences(req(`/api/v1/sla/occurrences?from=2026-11-01&to=2026-11-30&cursor=${cursor}`))), cursor).toMatchObject({
        status: 400,
        message: expect.stringContaining('cursor:'),
      });
    }
  });
});
