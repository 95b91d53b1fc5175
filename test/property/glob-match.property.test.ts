import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileMatch } from '../../src/rules/match.js';
import type { Transfer } from '../../src/source/transfer.js';

/**
 * `match` globs against a reference: `*` is any run of characters but `/`, `?` one character but `/`, the rest
 * literal; an empty value never matches; a pattern without `/` also matches a path's base name.
 */
function referenceMatch(pattern: string, value: string): boolean {
  if (value === '') return false;
  const re = new RegExp(`^${[...pattern].map((c) => (c === '*' ? '[^/]*' : c === '?' ? '[^/]' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`, 'u');
  if (re.test(value)) return true;
  if (pattern.includes('/') || !value.includes('/')) return false;
  const trimmed = value.endsWith('/') ? value.slice(0, -1) : value;
  return re.test(trimmed.slice(trimmed.lastIndexOf('/') + 1));
}

function transfer(file: string, user: string): Transfer {
  const record = {
    DATAHORA: '2024-05-01T12:00:00.000Z', INSTANCE: 'PROD01', USUARIO: user, CONEXAO: '', DATAARQUIVO: '', EVENTO: 7, HORAARQUIVO: '',
    MAXTAMREG: null, NUMREG: null, MENSAGEM: '', NOMEARQUIVO: file, TAGS: '', PROCID: null, REDE: '', RESULTADO: 0, TAMARQUIVO: 0, THREADID: null, TIPOREC: '', DIAS: 0,
  };
  return { id: 'x', source: 's', time: 0, instance: 'PROD01', user, eventCode: 7, event: 'reception', file, code: 0, result: 'success', size: 0, message: '', tags: '', record };
}

// Pattern characters: literals (including ones special to regular expressions and a leading dot) and the two
// wildcards, never two `*` in a row (`**` is not part of the contract's glob language).
const literal = fc.constantFrom('A', 'b', '1', '_', '-', '.', '+', '(', ')', '$', '^', '|');
const pattern = fc
  .array(fc.oneof({ weight: 4, arbitrary: literal }, { weight: 1, arbitrary: fc.constant('*') }, { weight: 1, arbitrary: fc.constant('?') }), { minLength: 1, maxLength: 6 })
  .map((cs) => cs.join(''))
  .filter((p) => !p.includes('**'));
const value = fc.array(fc.oneof({ weight: 4, arbitrary: literal }, { weight: 1, arbitrary: fc.constant('/') }), { maxLength: 10 }).map((cs) => cs.join(''));

describe('glob matching (properties)', () => {
  it('agrees with the reference for file names and paths', () => {
    fc.assert(
      fc.property(pattern, value, (p, v) => {
        expect(compileMatch({ file: [p] })(transfer(v, 'BANK1'))).toBe(referenceMatch(p, v));
      }),
      { numRuns: 500 },
    );
  });

  it('a list matches when any pattern does; several labels must all match', () => {
    fc.assert(
      fc.property(fc.array(pattern, { minLength: 1, maxLength: 3 }), value, pattern, fc.stringMatching(/^[A-Z0-9_]{1,6}$/), (ps, v, up, user) => {
        const expected = ps.some((p) => referenceMatch(p, v)) && referenceMatch(up, user);
        expect(compileMatch({ file: ps, user: [up] })(transfer(v, user))).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });
});
