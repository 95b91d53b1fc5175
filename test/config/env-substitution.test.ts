import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maskEnvReferences, substituteEnv } from '../../src/config/env-substitution.js';

describe('substituteEnv', () => {
  const env = { A: 'alpha', EMPTY: '', NUM: '42' };

  it('replaces ${VAR} and applies :- defaults when unset or empty', () => {
    expect(substituteEnv('x-${A}-${NUM}', env).text).toBe('x-alpha-42');
    expect(substituteEnv('${MISSING:-dflt}|${EMPTY:-e}|${A:-no}', env).text).toBe('dflt|e|alpha');
    expect(substituteEnv('${EMPTY}', env)).toEqual({ text: '', changed: true, errors: [] });
  });

  it('turns $$ into $ and keeps other dollars as written', () => {
    expect(substituteEnv('pa$$word $5 a$b $${A}', env).text).toBe('pa$word $5 a$b ${A}');
    expect(substituteEnv('no dollars', env)).toEqual({ text: 'no dollars', changed: false, errors: [] });
  });

  it('reports unset variables, bad names and unterminated references', () => {
    expect(substituteEnv('${NOPE}', env).errors).toEqual([{ reference: 0, message: expect.stringContaining('NOPE is not set'), unset: 'NOPE' }]);
    expect(substituteEnv('${A B}', env).errors[0]?.message).toContain('invalid variable reference');
    expect(substituteEnv('${A', env).errors[0]?.message).toContain('unterminated');
  });

  it('does not expand references inside substituted values', () => {
    expect(substituteEnv('${X}', { X: '${A} $$' }).text).toBe('${A} $$');
  });
});

describe('maskEnvReferences', () => {
  it('keeps the length of every line, so positions in the masked text are those of the original', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', ' ', ':', '{', '}', '$', '$$', '${X}', '${Y:-d}', '\n', '#')), (parts) => {
        const text = parts.join('');
        const { masked, references } = maskEnvReferences(text);
        expect(masked.length).toBe(text.length);
        expect(masked.split('\n').map((l) => l.length)).toEqual(text.split('\n').map((l) => l.length));
        for (const r of references) expect(text.slice(r.offset, r.offset + r.text.length)).toBe(r.text);
        // No reference survives (a `$$` pair before `{` is a literal dollar, not a reference).
        expect(masked.replace(/\$\$/g, '')).not.toMatch(/\$\{[^}\n]*\}/);
      }),
    );
  });
});
