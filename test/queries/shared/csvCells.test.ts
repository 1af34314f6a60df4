import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { csvCast, safeCell } from '../../../queries/shared/csvCells.ts';

describe('CSV formula neutralisation (OWASP)', () => {
  it('prefixes a quote to cells a spreadsheet would run as a formula', () => {
    for (const evil of [
      '=1+2',
      '+1',
      '-2+3',
      '@SUM(A1)',
      '\t=1',
      '\r=1',
      '=HYPERLINK("http://x")',
    ]) {
      expect(safeCell(evil)).toBe(`'${evil}`);
    }
  });

  it('leaves every other cell as it is', () => {
    for (const plain of ['', 'alice@example.com', 'a=b', '1', 'x-y', ' =not first']) {
      expect(safeCell(plain)).toBe(plain);
    }
  });

  it('applies to strings only when used as the csv-stringify cast; numbers stay numbers', () => {
    expect(stringify([['=cmd', -5, 'ok']], { cast: csvCast })).toBe(`'=cmd,-5,ok\n`);
  });
});
