import { describe, expect, it } from 'vitest';
import { errorFields, TransferWatchError } from '../../src/util/errors.js';

describe('errorFields (the `err` of a log line)', () => {
  it('gives type, message and code; a stack only for unexpected errors', () => {
    expect(errorFields(new TransferWatchError('source_timeout', 'timed out after 30 s'))).toEqual({ type: 'TransferWatchError', message: 'timed out after 30 s', code: 'source_timeout' });
    const unexpected = errorFields(new TypeError('x is undefined'));
    expect(unexpected).toMatchObject({ type: 'TypeError', message: 'x is undefined' });
    expect(unexpected.stack).toContain('TypeError: x is undefined');
    expect(errorFields(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).toMatchObject({ code: 'ECONNREFUSED' });
    expect(errorFields('plain text')).toEqual({ type: 'string', message: 'plain text' });
  });
});
