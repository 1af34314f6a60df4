import { describe, expect, it } from 'vitest';
import { copyLine, copyText } from '../../src/eventStore/copyRows.ts';

describe('COPY text format', () => {
  it('escapes backslash, tab, newline and carriage return, and leaves other text alone', () => {
    expect(copyText('plain "json" é')).toBe('plain "json" é');
    expect(copyText('a\\b\tc\nd\re')).toBe('a\\\\b\\tc\\nd\\re');
  });

  it('writes one tab-separated line a row', () => {
    expect(copyLine(['1', 'x\ty', '{"a":"\\"q\\""}'])).toBe('1\tx\\ty\t{"a":"\\\\"q\\\\""}\n');
  });
});
