import { describe, expect, it } from 'vitest';
import { compileHogQL, HogQLError } from '../../../projections/hogql/index.ts';
import type { ClickHouse } from '../../../src/runtime/clickhouse.ts';

/**
 * Number literals are printed as written (PostHog's parser hands integers past 2^53 over as
 * JSON numbers JavaScript would round) and the conversions print as PostHog's
 * accurateCastOrNull. The printer only reads the database's name: nothing runs here.
 */
const deps = { ch: { database: 'db' } as ClickHouse };
const select = async (expr: string) =>
  (await compileHogQL(deps, { projectId: 7, query: `select ${expr}` })).sql.replace(
    / LIMIT 101$/,
    '',
  );

describe('number literals', () => {
  it('integers past 2^53 keep every digit, in and beyond 64 bits', async () => {
    expect(await select('9223372036854775807, -9223372036854775808')).toBe(
      'SELECT 9223372036854775807, -9223372036854775808',
    );
    expect(await select('9007199254740993, 18446744073709551615')).toBe(
      'SELECT 9007199254740993, 18446744073709551615',
    );
    // past 64 bits ClickHouse reads the digits as a Float64, as it reads the same literal
    expect(await select('123456789012345678901234567890')).toBe(
      'SELECT 123456789012345678901234567890',
    );
  });

  it('a whole float stays a float; small numbers print as before', async () => {
    expect(await select('1e19, 1e30, 2.5, 42, -7')).toBe('SELECT 1e+19, 1e+30, 2.5, 42, -7');
  });

  it('inf and nan are ClickHouse’s; a number past a 64-bit float is refused naming it', async () => {
    expect(await select('inf, nan')).toBe('SELECT inf, nan');
    const error = await select("'é' = 1e400").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HogQLError);
    // the position counts characters (é is one) from the query's start, `select ` included
    expect((error as Error).message).toMatch(/^Number 1e400 at position 13 is out of range/);
  });
});

describe('conversions as PostHog prints them', () => {
  it('toInt, toFloat, the sized ones and toUUID cast to their type, NULL when it does not fit', async () => {
    expect(await select("toInt(1), toFloat('2.5'), TOINT('3'), toInt32(4.5), toUInt8(300)")).toBe(
      "SELECT accurateCastOrNull(1, 'Int64'), accurateCastOrNull('2.5', 'Float64'), accurateCastOrNull('3', 'Int64'), accurateCastOrNull(4.5, 'Int32'), accurateCastOrNull(300, 'UInt8')",
    );
    expect(await select("toUUID('x'), toDecimal('1.25', 2)")).toBe(
      "SELECT accurateCastOrNull('x', 'UUID'), accurateCastOrNull('1.25', 'Decimal64(2)')",
    );
    expect(await select("toIntOrZero('x'), toFloatOrNull('y'), toInt64OrNull('z')")).toBe(
      "SELECT toInt64OrZero('x'), toFloat64OrNull('y'), toInt64OrNull('z')",
    );
  });

  it('a conversion with the wrong arguments is refused', async () => {
    await expect(select('toInt(1, 2)')).rejects.toThrow(/toInt takes one argument/);
    await expect(select("toDecimal('1', event)")).rejects.toThrow(
      /toDecimal's scale must be a whole number from 0 to 18/,
    );
  });
});
