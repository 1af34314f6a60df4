import { describe, expect, it } from 'vitest';
import { ExprCompiler } from '../../../projections/events/hogql/hogqlCompiler.ts';
import {
  depthOf,
  MAX_DEPTH,
  MAX_EXPRESSION_LENGTH,
  parseExpr,
  parseOrderItem,
  parseSelectItem,
} from '../../../projections/events/hogql/hogqlParser.ts';
import { compileWhere } from '../../../projections/events/hogql/hogqlQuery.ts';
import { HogQLError } from '../../../projections/events/hogql/hogqlTokenizer.ts';
import { Params } from '../../../projections/events/sqlParams.ts';

/** Nesting and literals bounded before ClickHouse sees them (issue #25): a 400, never a 500. */
const compile = (text: string) => {
  const params = new Params();
  const c = new ExprCompiler(params).compile(parseExpr(text));
  return { sql: c.sql, params: params.values };
};
const tooDeep = /the expression is nested more than 100 levels deep/;
/** `n` levels of each way to nest around a leaf */
const nestings: Record<string, (n: number) => string> = {
  NOT: (n) => `${'NOT '.repeat(n)}true`,
  parentheses: (n) => `${'('.repeat(n)}1${')'.repeat(n)}`,
  'unary minus': (n) => `${'- '.repeat(n)}event`,
  'a + a + …': (n) => `1${' + 1'.repeat(n)}`,
  'a * a * …': (n) => `1${'*1'.repeat(n)}`,
  'function calls': (n) => `${'lower('.repeat(n)}event${')'.repeat(n)}`,
  comparisons: (n) => `${'('.repeat(n - 1)}event = 'a'${") = 'a'".repeat(n - 1)}`,
};

describe('HogQL depth limit', () => {
  for (const [name, make] of Object.entries(nestings)) {
    it(`${name}: ${MAX_DEPTH} levels parse, ${MAX_DEPTH + 1} answer the limit`, () => {
      expect(depthOf(parseExpr(make(MAX_DEPTH)))).toBeLessThanOrEqual(MAX_DEPTH);
      expect(() => parseExpr(make(MAX_DEPTH + 1))).toThrow(HogQLError);
      expect(() => parseExpr(make(MAX_DEPTH + 1))).toThrow(tooDeep);
    });
  }

  it('names the parameter and the limit, quoting only the start of the expression', () => {
    const text = `${'NOT '.repeat(600)}event = 'a'`;
    const error = (() => {
      try {
        compileWhere([text], new Params());
      } catch (e) {
        return e as HogQLError;
      }
    })();
    expect(error).toBeInstanceOf(HogQLError);
    expect(error!.attr).toBe('where');
    expect(error!.message).toMatch(
      /^where "NOT NOT .{0,60}…": the expression is nested more than 100/,
    );
  });

  it('stays fast and within its stack on the deepest and longest inputs', () => {
    const started = performance.now();
    const inputs = [
      `${'NOT '.repeat(998)}1 = 1`,
      `${'('.repeat(1999)}1${')'.repeat(1999)}`,
      `1${'+1'.repeat(1999)}`,
      `${'- '.repeat(1999)}1`,
      `${'lower('.repeat(500)}event${')'.repeat(500)}`,
    ];
    for (const text of inputs) {
      expect(text.length).toBeLessThanOrEqual(MAX_EXPRESSION_LENGTH);
      for (const parse of [parseExpr, parseSelectItem, parseOrderItem])
        expect(() => parse(text)).toThrow(tooDeep);
    }
    // 100,000 parentheses (and as long a chain) never reach the parser's recursion
    for (const text of ['('.repeat(100_000), `1${'+1'.repeat(100_000)}`])
      expect(() => parseExpr(text)).toThrow(/longer than 4000 characters/);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('HogQL number literals', () => {
  it('keeps 64-bit integers exact, as Int64 or UInt64 parameters', () => {
    expect(compile('substring(event, -9223372036854775808, 9223372036854775807)')).toEqual({
      sql: 'substring(event, toInt64({p0:Int64}), toInt64({p1:Int64}))',
      params: { p0: -9223372036854775808n, p1: 9223372036854775807n },
    });
    expect(compile('18446744073709551615')).toEqual({
      sql: '{p0:UInt64}',
      params: { p0: 18446744073709551615n },
    });
    expect(compile('-9007199254740991')).toEqual({
      sql: '{p0:Int64}',
      params: { p0: -9007199254740991 },
    });
  });

  it('reads larger integers as floats, as ClickHouse does, sent as text chDB accepts', () => {
    expect(compile('18446744073709551616')).toEqual({
      sql: '{p0:Float64}',
      params: { p0: '18446744073709552000' },
    });
    expect(compile(`1${'0'.repeat(300)}`).params.p0).toBe('1e+300');
    expect(compile('-9223372036854775809').params.p0).toBe('-9223372036854776000');
    expect(compile('1e30').params.p0).toBe('1e+30');
    expect(compile('0.5').params.p0).toBe(0.5);
    expect(compile(`0.${'0'.repeat(3000)}1`).params.p0).toBe(0);
  });

  it('refuses a number no 64-bit float holds, naming it', () => {
    for (const text of ['1e400', '-1e309', `1${'0'.repeat(400)}`, `${'9'.repeat(3990)}`])
      expect(() => parseExpr(text)).toThrow(/out of range: numbers must lie within ±1\.8e308/);
    expect(() => parseExpr(`${'9'.repeat(3990)}`)).toThrow(/Number 9{20}… at position 0/);
  });
});
