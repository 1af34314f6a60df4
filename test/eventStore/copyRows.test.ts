import { describe, expect, it } from 'vitest';
import { copyBytes, copyLine, copyText } from '../../src/eventStore/copyRows.ts';

describe('COPY text format', () => {
  it('escapes backslash, tab, newline and carriage return, and leaves other text alone', () => {
    expect(copyText('plain "json" é')).toBe('plain "json" é');
    expect(copyText('a\\b\tc\nd\re')).toBe('a\\\\b\\tc\\nd\\re');
  });

  it('writes one tab-separated line a row', () => {
    expect(copyLine(['1', 'x\ty', '{"a":"\\"q\\""}'])).toBe('1\tx\\ty\t{"a":"\\\\"q\\\\""}\n');
  });

  it('encodes the lines into one buffer byte for byte as their UTF-8, multi-byte text included', () => {
    const lines = [
      copyLine(['1', '{"city":"Zürich","emoji":"🦔"}']),
      copyLine(['2', 'x'.repeat(200_000)]),
      copyLine(['3', 'ñ\t']),
    ];
    const bytes = copyBytes(lines);
    expect(bytes.equals(Buffer.from(lines.join(''), 'utf8'))).toBe(true);
    expect(copyBytes([]).length).toBe(0);
  });
});
