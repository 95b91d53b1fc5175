import fc from 'fast-check';
import Handlebars from 'handlebars';
import { describe, expect, it, vi } from 'vitest';
import { checkTemplate, compileTemplate } from '../../src/rules/template.js';

describe('templates', () => {
  it('render values and labels as plain text (channels escape for themselves)', () => {
    const render = compileTemplate('{{count}} failed for {{labels.user}} <{{labels.file}}>');
    expect(render({ count: 5, labels: { user: 'BANK1', file: '<!channel>' } })).toBe('5 failed for BANK1 <<!channel>>');
  });

  it('accept built-in helpers and variables of the rule type; reject unknown ones and syntax errors', () => {
    const vars = ['labels', 'count', 'arrived_at'];
    expect(checkTemplate('{{#if arrived_at}}late {{arrived_at}}{{else}}{{count}}{{/if}}', vars)).toBeUndefined();
    expect(checkTemplate('{{#each labels}}{{@key}}={{this}} {{/each}}', vars)).toBeUndefined();
    expect(checkTemplate('{{cnt}}', vars)).toMatch(/unknown variable "cnt"/);
    expect(checkTemplate('{{shout count}}', vars)).toMatch(/unknown helper shout/);
    expect(checkTemplate('{{count', vars)).toMatch(/^invalid template: Parse error/);
  });
});

describe('templates without mustaches', () => {
  it('render exactly as Handlebars renders them (the text as is)', async () => {
    const { default: Handlebars } = await import('handlebars');
    for (const text of ['team-payments', '', '  spaced  ', 'a \\ backslash', 'one { brace } and }}', '<b>&amp;</b>', 'line\nbreak', '\\{ {x}']) {
      const expected = Handlebars.create().compile(text, { noEscape: true, knownHelpersOnly: true, strict: false })({});
      expect(compileTemplate(text)({ count: 3 }), JSON.stringify(text)).toBe(expected);
    }
  });
});

describe('plain templates (text and mustaches only)', () => {
  /** The template as Handlebars itself renders it, with the options rules compile with. */
  function handlebars(source: string): (context: Record<string, unknown>) => string {
    const env = Handlebars.create();
    const spec: unknown = new Function(`return ${env.precompile(source, { noEscape: true, knownHelpersOnly: true, strict: false })}`)();
    return env.template(spec as Parameters<typeof env.template>[0]);
  }

  /** The output, or that it threw (an object without a prototype cannot be made text, by either). */
  function outcome(render: () => string): { text: string } | { threw: string } {
    try {
      return { text: render() };
    } catch (err) {
      return { threw: err instanceof Error ? err.constructor.name : 'unknown' };
    }
  }

  it('render exactly as Handlebars renders them, on generated templates and values', () => {
    // Handlebars warns on the console when it refuses a prototype property; the output is what is compared.
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const name = fc.constantFrom('count', 'labels', 'user', 'n', 'f', 'o', 'length', 'toString', 'constructor');
      const mustache = fc.tuple(fc.array(name, { minLength: 1, maxLength: 3 }), fc.constantFrom('{{', '{{~', '{{{'), fc.constantFrom('}}', '~}}')).map(
        ([path, open, close]) => (open === '{{{' ? `{{{${path.join('.')}}}}` : `${open}${path.join('.')}${close}`),
      );
      const text = fc.constantFrom('', ' ', 'x', ' failed for ', '\n', '<', 'a b');
      const template = fc.array(fc.oneof(mustache, text), { minLength: 1, maxLength: 6 }).map((a) => a.join(''));
      const leaf = fc.oneof(
        fc.integer({ min: -3, max: 3 }),
        fc.constantFrom('BANK1', '', 'x y', null, undefined, true, false, 0, 1.5),
        fc.constant([1, 2]),
        fc.constant({ valueOf: () => 7, toString: () => 'T' }),
        fc.constant(() => 'called'),
        fc.constant(Object.create({ user: 'inherited' }) as unknown),
      );
      const context = fc.dictionary(name, fc.oneof(leaf, fc.dictionary(name, leaf, { maxKeys: 3 })), { maxKeys: 5 });
      fc.assert(
        fc.property(template, fc.array(context, { minLength: 1, maxLength: 4 }), (source, contexts) => {
          const ours = compileTemplate(source);
          const theirs = handlebars(source);
          for (const c of contexts) expect(outcome(() => ours(c)), `${source} on ${JSON.stringify(c)}`).toEqual(outcome(() => theirs(c)));
        }),
        { numRuns: 3_000 },
      );
    } finally {
      quiet.mockRestore();
      warn.mockRestore();
    }
  });

  it('open with two numbers added up, as Handlebars does; other templates go through Handlebars', () => {
    expect(compileTemplate('{{a}}{{b}}')({ a: 1, b: 2 })).toBe('3');
    expect(compileTemplate('x{{a}}{{b}}')({ a: 1, b: 2 })).toBe('x12');
    // Whitespace control empties the text between them: nothing separates them in the compiled code either.
    expect(compileTemplate('{{a}} {{~b}}')({ a: 1, b: 2 })).toBe('3');
    expect(compileTemplate('{{#if a}}yes{{/if}}')({ a: 1 })).toBe('yes');
    expect(compileTemplate('{{lookup labels "user"}}')({ labels: { user: 'U' } })).toBe('U');
  });
});
