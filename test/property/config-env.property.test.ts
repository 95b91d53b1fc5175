import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/base/duration.js';
import { ConfigError } from '../../src/base/config-error.js';
import { parseConfigText } from '../../src/config/load-config.js';

/**
 * A reference in a plain (unquoted) scalar is read as if its value had been written there (contract: replaced
 * "before parsing"); string fields keep the text of numbers and booleans as written, but an empty or null-like
 * value is YAML's null, which a string field reports as a positioned problem. Quoted references always give
 * the string itself.
 */
const CORE_NULL = /^(?:|~|null|Null|NULL)$/;

/** Environment values can hold anything but NUL: quotes, `#`, `: `, braces, `$`, `${X}`, newlines, unicode. */
const envValue = fc.string({ unit: fc.oneof(fc.constantFrom('$', '{', '}', '#', ':', ' ', '"', "'", '\n', '\\', '[', ']', ',', '&', '*', '!', '|', '>', '%', '@', '`', '-'), fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }), fc.constantFrom('é', '\u00a0', '😀')), maxLength: 24 }).filter((s) => !s.includes('\0'));

function configText(style: 'plain' | 'double' | 'single' | 'flow'): string {
  const ref = (name: string): string => (style === 'double' ? `"\${${name}}"` : style === 'single' ? `'\${${name}}'` : `\${${name}}`);
  const source =
    style === 'flow'
      ? `  - { name: prod, base_url: "https://mft.example.com/api", username: ${ref('TW_USER')}, password: ${ref('TW_PASSWORD')}, tags: ${ref('TW_TAGS')} }`
      : [
          '  - name: prod',
          '    base_url: https://mft.example.com/api',
          `    username: ${ref('TW_USER')}`,
          `    password: ${ref('TW_PASSWORD')}   # a comment \${NOT_EXPANDED}`,
          `    tags: ${ref('TW_TAGS')}`,
        ].join('\n');
  return ['sources:', source, 'poll:', '  interval: ${TW_INTERVAL}', '  delay: ${TW_DELAY:-30s}', 'state:', '  dir: "/var/lib/tw$$x"', ''].join('\n');
}

describe('config loader ${VAR} substitution (properties)', () => {
  it('arbitrary environment values arrive unchanged and never change the structure', () => {
    fc.assert(
      fc.property(
        envValue.filter((s) => s.length > 0),
        envValue,
        envValue,
        fc.integer({ min: 1, max: 10 * 86_400_000 }),
        fc.constantFrom('plain', 'double', 'single', 'flow'),
        fc.option(fc.integer({ min: 0, max: 86_400_000 }), { nil: undefined }),
        (user, password, tags, intervalMs, style, delayMs) => {
          const env: NodeJS.ProcessEnv = { TW_USER: user, TW_PASSWORD: password, TW_TAGS: tags, TW_INTERVAL: formatDuration(intervalMs), NOT_EXPANDED: 'boom' };
          if (delayMs !== undefined) env['TW_DELAY'] = formatDuration(delayMs);
          const text = configText(style as 'plain');
          const quoted = style === 'double' || style === 'single';
          const retyped = !quoted && [user, password, tags].some((v) => CORE_NULL.test(v));
          if (retyped) {
            // Not a string any more: a positioned problem for that field, never a crash or another structure.
            let problems: string[] = [];
            try {
              parseConfigText(text, '/etc/tw/config.yaml', { env, dir: '/etc/tw' });
            } catch (err) {
              expect(err).toBeInstanceOf(ConfigError);
              problems = (err as ConfigError).problems.map((p) => p.message);
            }
            expect(problems.length).toBeGreaterThan(0);
            for (const m of problems) expect(m).toMatch(/^sources\[0\]\.(username|password|tags): /);
            return;
          }
          const { config } = parseConfigText(text, '/etc/tw/config.yaml', { env, dir: '/etc/tw' });
          expect(config.sources).toHaveLength(1);
          const [s] = config.sources;
          expect(s?.name).toBe('prod');
          expect(s?.base_url).toBe('https://mft.example.com/api');
          expect(s?.username).toBe(user);
          expect(s?.password).toBe(password);
          expect(s?.tags).toBe(tags);
          expect(config.poll.interval).toBe(intervalMs);
          // `:-` applies when unset (or empty).
          expect(config.poll.delay).toBe(delayMs ?? 30_000);
          expect(config.state.dir).toBe('/var/lib/tw$x');
        },
      ),
      { numRuns: 150 },
    );
  });
});
