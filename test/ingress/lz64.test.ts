import fc from 'fast-check';
import LZString from 'lz-string';
import { describe, expect, it } from 'vitest';
import { decompressLz64 } from '../../ingress/lz64.ts';
import { lz64Bomb } from '../support/bombs.ts';

describe('bounded lz64 decoder', () => {
  it('decodes whatever lz-string encodes, as lz-string does (property, seeded)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 2000 }), (text) => {
        const encoded = LZString.compressToBase64(text);
        const decoded = decompressLz64(encoded, 1_000_000);
        if (text === '') expect(decoded.ok).toBe(false);
        else expect(decoded).toEqual({ ok: true, text });
      }),
      { seed: 20261123, numRuns: 500 },
    );
  });

  it('reads JSON as posthog-js sent it', () => {
    const json = JSON.stringify([
      {
        event: '$pageview',
        properties: { distinct_id: 'a', token: 'k', $current_url: 'https://x.y/' },
      },
    ]);
    expect(decompressLz64(LZString.compressToBase64(json), 10_000)).toEqual({
      ok: true,
      text: json,
    });
  });

  it('stops at the budget: a 260 KB bomb of 5 × 10⁹ characters is refused at once', () => {
    const started = performance.now();
    expect(decompressLz64(lz64Bomb(100_000), 32 * 1024 * 1024)).toEqual({
      ok: false,
      reason: 'too_large',
    });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(decompressLz64(lz64Bomb(50), 1_000)).toEqual({ ok: false, reason: 'too_large' });
    expect(decompressLz64(lz64Bomb(50), 2_000)).toMatchObject({ ok: true });
  });

  it('refuses what is not a stream: empty, truncated, or naming an unknown entry', () => {
    expect(decompressLz64('', 100)).toEqual({ ok: false, reason: 'malformed' });
    const good = LZString.compressToBase64('hello hello hello');
    expect(decompressLz64(good.slice(0, 3), 100)).toEqual({ ok: false, reason: 'malformed' });
    expect(decompressLz64('////////', 100)).toEqual({ ok: false, reason: 'malformed' });
  });
});
