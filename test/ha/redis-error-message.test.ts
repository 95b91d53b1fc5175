import { describe, expect, it } from 'vitest';
import { redisErrorMessage } from '../../src/ha/redis-connection.js';

/** A Redis error in the log says what it means, not which ioredis option to read about (issue 50). */
describe('redisErrorMessage', () => {
  it('says what ioredis errors mean, without its option names', () => {
    const said = redisErrorMessage(new Error('Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.'));
    expect(said).toMatch(/^Redis did not answer: the connection was down/);
    expect(said).not.toContain('maxRetriesPerRequest');
    expect(redisErrorMessage(new Error('connect ECONNREFUSED 127.0.0.1:6390'))).toBe('Redis refused the connection: is it running at that address? (connect ECONNREFUSED 127.0.0.1:6390)');
    expect(redisErrorMessage(new Error('Command timed out'))).toMatch(/^Redis did not answer in time/);
    expect(redisErrorMessage(new Error("READONLY You can't write against a read only replica."))).toMatch(/must name the primary/);
    // Anything else as it is.
    expect(redisErrorMessage(new Error('ERR unknown command'))).toBe('ERR unknown command');
  });
});
