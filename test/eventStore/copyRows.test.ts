import { describe, expect, it } from 'vitest';
import { CopyRows } from '../../src/eventStore/copyRows.ts';

const text = (rows: CopyRows) => rows.bytes().toString('utf8');

describe('COPY text format', () => {
  it('escapes backslash, tab, newline and carriage return, and leaves other text alone', () => {
    expect(text(new CopyRows().row(['plain "json" é']))).toBe('plain "json" é\n');
    expect(text(new CopyRows().row(['a\\b\tc\nd\re\\']))).toBe('a\\\\b\\tc\\nd\\re\\\\\n');
  });

  it('writes one tab-separated line a row', () => {
    expect(text(new CopyRows().row(['1', 'x\ty', '{"a":"\\"q\\""}']))).toBe(
      '1\tx\\ty\t{"a":"\\\\"q\\\\""}\n',
    );
  });

  it('encodes rows into one buffer byte for byte as their UTF-8, growing past its first size', () => {
    const rows = new CopyRows(16)
      .row(['1', '{"city":"Zürich","emoji":"🦔"}'])
      .row(['2', 'x'.repeat(200_000)])
      .row(['3', 'ñ\t', '\\🦔\n'])
      .row(['', '']);
    const expected = `1\t{"city":"Zürich","emoji":"🦔"}\n2\t${'x'.repeat(200_000)}\n3\tñ\\t\t\\\\🦔\\n\n\t\n`;
    expect(rows.bytes().equals(Buffer.from(expected, 'utf8'))).toBe(true);
    expect(rows.rows).toBe(4);
    expect(new CopyRows().bytes().length).toBe(0);
  });
});
