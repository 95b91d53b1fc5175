import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/util/logger.js';
import { errorFields, TransferWatchError } from '../../src/util/errors.js';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'info', destination }) };
}

describe('the logger’s err', () => {
  it('names the error’s kind, message and code, whether given as errorFields(err) or as the error', async () => {
    const { lines, logger } = capture();
    const fenced = new TransferWatchError('ha_fenced', 'the leader lease is replica r2’s now');
    logger.warn({ err: errorFields(fenced) }, 'fenced');
    logger.warn({ err: new Error('HTTP 500 from the webhook') }, 'raw');
    logger.warn({ err: 'a string thrown' }, 'thrown');
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => l['err'])).toEqual([
      { type: 'TransferWatchError', message: 'the leader lease is replica r2’s now', code: 'ha_fenced' },
      expect.objectContaining({ type: 'Error', message: 'HTTP 500 from the webhook', stack: expect.stringContaining('HTTP 500') }),
      { type: 'string', message: 'a string thrown' },
    ]);
  });
});
