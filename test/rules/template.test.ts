import { describe, expect, it } from 'vitest';
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
