import { describe, expect, it } from 'vitest';
import {
  HogQLError,
  parseCacheStats,
  parseExpr,
  parseSelect,
  warmParser,
} from '../../../projections/hogql/index.ts';

describe('the parse cache', () => {
  it('parses a repeated text once, and hands each caller its own AST', async () => {
    await warmParser();
    const text = `select event, count() from events where distinct_id = 'cache-${Date.now()}' group by event`;
    const before = parseCacheStats().entries;
    const first = await parseSelect(text);
    expect(parseCacheStats().entries).toBe(before + 1);
    const again = await parseSelect(text);
    expect(parseCacheStats().entries).toBe(before + 1);
    expect(again).toEqual(first);
    // callers may build on the AST they get: a copy, never the cached one
    expect(again).not.toBe(first);
    // the same text as an expression is another entry, parsed as one
    const expr = await parseExpr("event = 'a'");
    expect(expr.node).toBe('CompareOperation');
    expect(parseCacheStats().entries).toBe(before + 2);
  });

  it('keeps a syntax error with its position, the same on every ask', async () => {
    const text = `select 'unterminated ${Date.now()}`;
    const ask = () => parseSelect(text).catch((e: unknown) => e);
    const first = await ask();
    expect((first as HogQLError).start).toBeGreaterThan(0);
    const entries = parseCacheStats().entries;
    const again = await ask();
    expect(parseCacheStats().entries).toBe(entries);
    for (const e of [first, again]) {
      expect(e).toBeInstanceOf(HogQLError);
      expect((e as HogQLError).start).toBe((first as HogQLError).start);
    }
  });

  it('answers texts asked at once from one parse', async () => {
    const text = `select uniq(person_id) from events -- ${Date.now()}`;
    const before = parseCacheStats().entries;
    const asts = await Promise.all(Array.from({ length: 5 }, () => parseSelect(text)));
    expect(new Set(asts.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(parseCacheStats().entries).toBe(before + 1);
  });
});
