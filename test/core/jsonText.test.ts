import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { composeJsonText, jsonText, rememberJsonText } from '../../src/core/jsonText.ts';

describe('JSON text written once', () => {
  it('composes exactly what JSON.stringify writes, members from memory or not', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })),
        fc.func(fc.boolean()),
        (value, remember) => {
          for (const member of Object.values(value))
            if (typeof member === 'object' && member !== null && remember(member))
              rememberJsonText(member, JSON.stringify(member));
          expect(composeJsonText(value)).toBe(JSON.stringify(value));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('leaves out what JSON leaves out and writes dates and odd keys as JSON does', () => {
    const value = {
      a: undefined,
      'quote"key\n': 1,
      at: new Date('2026-11-27T00:00:00.000Z'),
      f: () => 1,
      nested: { x: [1, 'two', null] },
      last: undefined,
    };
    expect(composeJsonText(value)).toBe(JSON.stringify(value));
    expect(composeJsonText({})).toBe('{}');
  });

  it('gives the remembered text of an object, and JSON.stringify of any other', () => {
    const remembered = rememberJsonText({ a: 1 }, '{"a":1}');
    expect(jsonText(remembered)).toBe('{"a":1}');
    // what is remembered is what is used: the caller promises the object does not change
    expect(jsonText(rememberJsonText({ b: 2 }, '{"b":2, "remembered":true}'))).toContain(
      'remembered',
    );
    expect(jsonText({ c: [3] })).toBe('{"c":[3]}');
  });
});
