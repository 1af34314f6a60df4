import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assignInto, copyOf } from '../../src/core/objects.ts';

const keysAndValues = (o: object) => JSON.stringify(Object.entries(o));

describe('copies that stay cheap to grow', () => {
  it('copy and merge as the spread does: the same keys, values and order', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 1 })),
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 1 })),
        (a, b) => {
          expect(keysAndValues(copyOf(a))).toBe(keysAndValues({ ...a }));
          expect(keysAndValues(assignInto(copyOf(a), b))).toBe(keysAndValues({ ...a, ...b }));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps __proto__ an own key, never the prototype', () => {
    const hostile = JSON.parse('{"a":1,"__proto__":{"polluted":true},"2":"two"}') as Record<
      string,
      unknown
    >;
    const copy = copyOf(hostile);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(Object.keys({ ...hostile }));
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    const merged = assignInto({ b: 2 }, hostile);
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
  });

  it('copies, never shares: changing the copy leaves the source alone', () => {
    const source = { a: 1, nested: { b: 2 } };
    const copy = copyOf(source);
    copy.a = 3;
    expect(source.a).toBe(1);
    expect(copy.nested).toBe(source.nested);
  });
});
