import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../src/util/redact.js';

describe('redactSecrets', () => {
  const secret = "p@ss w0rd!'()*";

  it('hides a secret as written, URL-encoded, form-encoded (as a token endpoint echoes its body), JSON-escaped and base64', () => {
    const forms = [
      secret,
      encodeURIComponent(secret),
      new URLSearchParams({ password: secret }).toString().slice('password='.length),
      JSON.stringify(secret).slice(1, -1),
      Buffer.from(secret).toString('base64').replace(/=+$/, ''),
      Buffer.from(secret).toString('base64url'),
    ];
    for (const form of forms) {
      const out = redactSecrets(`400 Bad Request: grant_type=password&username=ops&password=${form}&scope=x`, [secret]);
      expect(out, form).not.toContain(form);
      expect(out).toContain('<redacted>');
      expect(out).toContain('username=ops');
    }
  });

  it('leaves short secrets and text without them alone', () => {
    expect(redactSecrets('abc and more', ['abc'])).toBe('abc and more');
    expect(redactSecrets('nothing here', [secret])).toBe('nothing here');
  });
});
