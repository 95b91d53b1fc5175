import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeHtml, escapePlain, escapeSlack, sanitizeHeader } from '../../../src/notify/templates/escape.js';

describe('escaping per channel', () => {
  it('slack: & < > only, so mentions and links cannot be forged', () => {
    expect(escapeSlack('<!channel> & <@U123|x> "q"')).toBe('&lt;!channel&gt; &amp; &lt;@U123|x&gt; "q"');
  });

  it('html: text stays text', () => {
    expect(escapeHtml(`<script>alert("x")</script> & 'y'`)).toBe(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;',
    );
  });

  it('headers and plain text never carry CR, LF or other control characters', () => {
    expect(sanitizeHeader('a\r\nBcc: x@y.z')).toBe('a Bcc: x@y.z');
    expect(escapePlain('a\u001b[31mred')).toBe('a [31mred');
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }),
        (s) =>
          [sanitizeHeader(s), escapeSlack(s), escapeHtml(s), escapePlain(s)].every((out) => !/[\r\n]/.test(out) && !out.includes(String.fromCharCode(0))) &&
          !/[<>]/.test(escapeSlack(s)) &&
          !/[<>"']/.test(escapeHtml(s)),
      ),
      { numRuns: 300 },
    );
  });
});
