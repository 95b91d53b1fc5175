import fc from 'fast-check';
import Handlebars from 'handlebars';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { compileTemplate, plainParts } from '../../src/rules/template.js';

/**
 * Templates that are only text and `{{path}}`s render without Handlebars' runtime (src/rules/template.ts); the
 * output must be exactly Handlebars' for any template and any context.
 */
const OPTIONS = { noEscape: true, knownHelpersOnly: true, strict: false } as const;

const text = fc.constantFrom('', ' ', 'failed ', ' in ', '\n', '  \n  ', 'a { b }', '}}', '{ {', 'x\\y', '\\{{count}}', '<b>&</b>', 'é ✓', '"q"');
const path = fc.constantFrom(
  'count', 'labels.user', 'labels.file', 'labels.constructor', 'constructor', '__proto__', 'toString', 'length', 'text.length',
  'list', 'list.length', 'list.0', 'fn', 'nothing', 'undef', 'deep.a.b', 'deep.a.missing.x', 'zero', 'negzero', 'no', 'yes', 'obj',
  'labels/user', 'labels.[odd key]', 'this.count', 'this', '.', '../count', '@root.count', 'if', 'lookup', 'log', 'each', 'with', 'unless',
  'nan', 'inf', 'big', 'date',
);
const mustache = fc
  .tuple(path, fc.boolean(), fc.boolean(), fc.boolean())
  .map(([p, triple, tildeLeft, tildeRight]) => (triple ? `{{${tildeLeft ? '~' : ''}{${p}}${tildeRight ? '~' : ''}}}` : `{{${tildeLeft ? '~' : ''}${p}${tildeRight ? '~' : ''}}}`));
const other = fc.constantFrom('{{! a comment }}', '{{!-- a }} comment --}}', '{{#if count}}yes{{else}}no{{/if}}', '{{lookup labels "user"}}', '{{"count"}}', '{{count 1}}');
const template = fc
  .array(fc.oneof({ weight: 3, arbitrary: text }, { weight: 4, arbitrary: mustache }, { weight: 1, arbitrary: other }), { minLength: 1, maxLength: 6 })
  .map((parts) => parts.join(''));

const scalar = fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 5 }), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.constant(-0));
const context = fc.record({ count: scalar, user: scalar, file: scalar }).map(({ count, user, file }) => ({
  count,
  labels: { user, file, 'odd key': 'odd' },
  text: 'abc',
  list: [1, 'two', null],
  fn(this: { count: unknown }) {
    return `fn:${String(this.count)}`;
  },
  nothing: null,
  undef: undefined,
  deep: { a: { b: count } },
  zero: 0,
  negzero: -0,
  no: false,
  yes: true,
  obj: { a: 1 },
  nan: Number.NaN,
  inf: Number.POSITIVE_INFINITY,
  big: 1e21,
  date: new Date(0),
}));

function handlebars(source: string, ctx: Record<string, unknown>): { out?: string; error?: boolean } {
  try {
    return { out: Handlebars.create().compile(source, OPTIONS)(ctx) };
  } catch {
    return { error: true };
  }
}

describe('templates of text and {{path}}s (properties)', () => {
  // Handlebars logs each denied prototype property once; the comparison is what matters here.
  beforeAll(() => void vi.spyOn(console, 'error').mockImplementation(() => undefined));
  afterAll(() => vi.restoreAllMocks());

  it('render exactly what Handlebars renders', () => {
    fc.assert(
      fc.property(template, context, (source, ctx) => {
        const expected = handlebars(source, ctx);
        if (expected.error) {
          expect(() => compileTemplate(source)(ctx)).toThrow();
          return;
        }
        expect(compileTemplate(source)(ctx), JSON.stringify(source)).toBe(expected.out);
      }),
      { numRuns: 3000 },
    );
  });

  it('skip Handlebars for plain templates and only for them', () => {
    for (const source of ['{{count}} failed transfers for {{labels.user}} in {{window}}', '{{~count~}} x', 'a {{! note }}{{labels.[odd key]}}', '{{{count}}}']) {
      expect(plainParts(source), source).toBeDefined();
    }
    for (const source of ['{{#if count}}x{{/if}}', '{{this.count}}', '{{../count}}', '{{@root.count}}', '{{lookup labels "user"}}', '{{log}}', '{{"count"}}', '{{count 1}}', '{{> partial}}']) {
      expect(plainParts(source), source).toBeUndefined();
    }
  });
});
