import { describe, expect, it } from 'vitest';
import {
  escapesUnstorable,
  mayHoldUnstorable,
  parseStorableJson,
  storableString,
  storableValue,
} from '../../src/core/storable.ts';

describe('storable: NUL and lone surrogates become U+FFFD', () => {
  it('strings: NUL and lone surrogates of both halves; pairs (emoji) and other text stay', () => {
    expect(storableString('a\u0000b')).toBe('a\uFFFDb');
    expect(storableString('x\ud800y\udc00z')).toBe('x\uFFFDy\uFFFDz');
    expect(storableString('end\ud83d')).toBe('end\uFFFD');
    expect(storableString('\ude00start')).toBe('\uFFFDstart');
    const clean = 'é 日本 😀 \u0001 \\u0000';
    expect(storableString(clean)).toBe(clean);
  });

  it('values: keys and strings at any depth; the same object when nothing needs cleaning', () => {
    const clean = { a: ['😀', 1, null, true, { b: 'c' }], d: { e: 'f' } };
    expect(storableValue(clean)).toBe(clean);
    expect(
      storableValue({ 'k\u0000': ['\ud800', { 'x\udc00': 'y\u0000' }], n: 1, keep: '😀' }),
    ).toEqual({ 'k\uFFFD': ['\uFFFD', { 'x\uFFFD': 'y\uFFFD' }], n: 1, keep: '😀' });
    // an own `__proto__` key (JSON.parse makes one) stays a key, not the prototype
    const parsed = storableValue(JSON.parse('{"__proto__":{"x":"\\u0000"}}')) as object;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['__proto__']);
    // a Buffer (or any object that is not plain) is left as it is
    const buffer = Buffer.from([0]);
    expect(storableValue({ buffer }).buffer).toBe(buffer);
  });

  it('JSON text: the cheap test sees escapes (and raw units, for any string); parsing cleans only then', () => {
    expect(escapesUnstorable('{"a":"plain 😀 \\u00e9"}')).toBe(false);
    expect(escapesUnstorable('{"a":"\\u0000"}')).toBe(true);
    expect(escapesUnstorable('{"a":"\\uD800"}')).toBe(true);
    expect(escapesUnstorable('{"a":"\ud800"}')).toBe(false); // not from UTF-8: see mayHoldUnstorable
    expect(mayHoldUnstorable('{"a":"\ud800"}')).toBe(true);
    expect(mayHoldUnstorable('{"a":"😀"}')).toBe(false);
    expect(parseStorableJson('{"k\\u0000":"\\ud800x","lit":"\\\\u0000"}')).toEqual({
      'k\uFFFD': '\uFFFDx',
      lit: '\\u0000',
    });
    expect(parseStorableJson('["\\ud83d\\ude00"]')).toEqual(['😀']);
  });
});
