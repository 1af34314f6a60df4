import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeCaptureRequest } from '../../ingress/decodeRequestBody.ts';
import { PIECES_FROM_BYTES, parseJsonInPieces } from '../../ingress/parseJsonInPieces.ts';
import { jsonDepth } from '../../src/core/json.ts';

/** JSON.stringify that also shows key order and own `__proto__` keys */
const canonical = (v: unknown) => JSON.stringify(v);

const whitespaced = (v: unknown) => JSON.stringify(v, null, 2).replaceAll('\n', '\r\n\t');

describe('parseJsonInPieces: what JSON.parse gives, without one large string', () => {
  it('equals JSON.parse for any object or array, compact or spaced, split at every level', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(fc.jsonValue({ maxDepth: 4 })),
          fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 4 })),
        ),
        fc.boolean(),
        (value, spaced) => {
          const text = spaced ? whitespaced(value) : JSON.stringify(value);
          const result = parseJsonInPieces(Buffer.from(text), 10_000, 1);
          expect(result?.kind).toBe('parsed');
          if (result?.kind !== 'parsed') return;
          expect(canonical(result.value)).toBe(canonical(JSON.parse(text)));
          expect(result.depth).toBe(jsonDepth(text));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never accepts what JSON.parse refuses (a character dropped, doubled or replaced)', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { minKeys: 1 }),
        fc.nat(),
        fc.constantFrom('', ',', ':', ']', '}', '"', '\\', 'x'),
        (value, at, insert) => {
          const base = JSON.stringify(value);
          const i = at % base.length;
          for (const text of [
            base.slice(0, i) + base.slice(i + 1),
            base.slice(0, i) + insert + base.slice(i),
            base.slice(0, i) + insert + base.slice(i + 1),
          ]) {
            let expected: unknown;
            try {
              expected = JSON.parse(text);
            } catch {
              expected = undefined;
            }
            const result = parseJsonInPieces(Buffer.from(text), 10_000, 1);
            if (result?.kind === 'parsed') {
              expect(expected).not.toBeUndefined();
              expect(canonical(result.value)).toBe(canonical(expected));
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps duplicate keys as JSON.parse does and __proto__ as an own key', () => {
    const text = '{"a":1,"__proto__":{"polluted":true},"b":[1,2],"a":3}';
    const result = parseJsonInPieces(Buffer.from(text), 100, 1);
    expect(result?.kind).toBe('parsed');
    if (result?.kind !== 'parsed') return;
    const value = result.value as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['a', '__proto__', 'b']);
    expect(value.a).toBe(3);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('says too deep by the same count as jsonDepth, and leaves bytes that are not UTF-8 or not a container', () => {
    const deep = `{"batch":${'['.repeat(50)}${']'.repeat(50)}}`;
    expect(parseJsonInPieces(Buffer.from(deep), 40, 1)).toEqual({ kind: 'too_deep', depth: 51 });
    expect(parseJsonInPieces(Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d]), 10)).toBeUndefined();
    expect(parseJsonInPieces(Buffer.from('"text"'), 10)).toBeUndefined();
    expect(parseJsonInPieces(Buffer.from('\uFEFF[1]'), 10)).toBeUndefined();
    expect(parseJsonInPieces(Buffer.from('[1, NaN]'), 10)).toBeUndefined();
  });
});

describe('a capture body over the piece size', () => {
  const event = (i: number, extra: Record<string, unknown> = {}) => ({
    event: '$pageview',
    properties: { distinct_id: `user-${i}`, $current_url: `https://example.com/${i}`, ...extra },
  });
  const big = (extra: Record<string, unknown> = {}) => ({
    api_key: 'phc_test',
    batch: Array.from({ length: 1200 }, (_, i) => event(i, extra)),
  });
  const decode = (body: Buffer) =>
    decodeCaptureRequest({
      method: 'POST',
      path: '/batch',
      query: {},
      headers: { 'content-type': 'application/json' },
      body,
    });

  it('decodes to the payload of the whole text', () => {
    const payload = big({ city: 'Zürich 🦔' });
    const body = Buffer.from(JSON.stringify(payload));
    expect(body.length).toBeGreaterThan(PIECES_FROM_BYTES * 2);
    const decoded = decode(body);
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(canonical(decoded.payload)).toBe(canonical(payload));
  });

  it('turns an escaped NUL into U+FFFD, as the whole-text path does', () => {
    const body = Buffer.from(JSON.stringify(big({ note: 'a\u0000b' })));
    const decoded = decode(body);
    if (!decoded.ok) throw new Error('refused');
    const first = (decoded.payload as { batch: { properties: { note: string } }[] }).batch[0]!;
    expect(first.properties.note).toBe('a\uFFFDb');
  });

  it('still takes NaN as null and refuses broken JSON with the same message', () => {
    const text = JSON.stringify(big()).replace(
      '"distinct_id":"user-7"',
      '"n":NaN,"distinct_id":"user-7"',
    );
    const decoded = decode(Buffer.from(text));
    if (!decoded.ok) throw new Error('refused');
    const seventh = (decoded.payload as { batch: { properties: Record<string, unknown> }[] })
      .batch[7]!;
    expect(seventh.properties.n).toBeNull();
    const broken = decode(Buffer.from(`${JSON.stringify(big()).slice(0, -2)}`));
    expect(broken.ok).toBe(false);
    if (broken.ok) return;
    expect(broken.error.detail).toMatch(/Invalid JSON/);
  });
});
