import { describe, expect, it } from 'vitest';
import { textTable } from '../../src/base/text-table.js';

describe('textTable', () => {
  it('aligns columns, leaves the last unpadded, and shows a control character of a cell as text', () => {
    expect(textTable(['USER', 'FILE'], [['BANK1', 'a.txt'], ['B\u001b[31m', 'x\ny']])).toBe('USER       FILE\nBANK1      a.txt\nB\\x1b[31m  x\\x0ay');
  });
});
