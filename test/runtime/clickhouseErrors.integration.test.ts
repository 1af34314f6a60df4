import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseError } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClickHouse, openClickHouse } from '../../src/runtime/clickhouse.ts';
import { clickHouseQueryError } from '../../src/runtime/clickhouseErrors.ts';

/**
 * The errors a query's text or values cause are told apart from outages and bugs, in the shapes
 * both runtimes give them: chDB's (real statements on the embedded engine) and a ClickHouse
 * server's (its HTTP error bodies, parsed the way @clickhouse/client parses them).
 */
let ch: ClickHouse;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hogstream-ch-errors-'));
beforeAll(async () => {
  ch = await openClickHouse(undefined, dir, 'ch_errors');
}, 60_000);
afterAll(async () => {
  await ch?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const failure = async (query: string, query_params?: Record<string, unknown>) => {
  try {
    await (await ch.client.query({ query, format: 'JSONEachRow', query_params })).json();
  } catch (error) {
    return error;
  }
  throw new Error(`${query} did not fail`);
};

describe('chDB', () => {
  const cases: [string, string, Record<string, unknown>?][] = [
    ['TOO_DEEP_AST', `SELECT ${'not('.repeat(600)}1${')'.repeat(600)}`],
    ['SYNTAX_ERROR', 'SELECT (1'],
    ['UNKNOWN_FUNCTION', 'SELECT noSuchFunction(1)'],
    ['UNKNOWN_IDENTIFIER', 'SELECT no_such_column'],
    ['ILLEGAL_TYPE_OF_ARGUMENT', "SELECT plus('a', 1)"],
    ['NUMBER_OF_ARGUMENTS_DOESNT_MATCH', 'SELECT lower()'],
    ['ILLEGAL_DIVISION', 'SELECT intDiv(1, 0)'],
    ['CANNOT_COMPILE_REGEXP', "SELECT match('a', '(')"],
    // past the events reader's max_result_rows (issue #26)
    [
      'TOO_MANY_ROWS_OR_BYTES',
      "SELECT number FROM numbers(100) SETTINGS max_result_rows = 10, result_overflow_mode = 'throw'",
    ],
    // a parameter value chDB refuses to send (a JavaScript integer past 2^53 has lost digits)
    ['BAD_QUERY_PARAMETER', 'SELECT {p:Int64}', { p: 2 ** 60 }],
  ];
  for (const [type, query, params] of cases) {
    it(`${type}: ${query.slice(0, 40)}`, async () => {
      const refused = clickHouseQueryError(await failure(query, params));
      expect(refused?.type).toBe(type);
      expect(refused?.message.length).toBeGreaterThan(5);
      expect(refused?.message).not.toMatch(/In scope|version/);
    });
  }
});

describe('a ClickHouse server (as @clickhouse/client parses its answers)', () => {
  it('by name, by code when the name is missing, the statement quoted in the message cut off', () => {
    const server = parseError(
      "Code: 43. DB::Exception: Illegal type String of argument of function plus: In scope SELECT plus('a', 1). (ILLEGAL_TYPE_OF_ARGUMENT) (version 24.8.4.13 (official build))",
    );
    expect(clickHouseQueryError(server)).toEqual({
      type: 'ILLEGAL_TYPE_OF_ARGUMENT',
      message: 'Illegal type String of argument of function plus',
    });
    expect(
      clickHouseQueryError(new Error('Code: 167. DB::Exception: AST is too deep. Maximum: 1000')),
    ).toMatchObject({ type: 'TOO_DEEP_AST' });
  });

  it('leaves outages, bugs and other databases alone', () => {
    const refused = (e: unknown) => clickHouseQueryError(e);
    expect(
      refused(parseError('Code: 999. DB::Exception: Keeper is down. (KEEPER_EXCEPTION)')),
    ).toBe(null);
    expect(
      refused(parseError('Code: 210. DB::Exception: Connection refused. (NETWORK_ERROR)')),
    ).toBe(null);
    expect(
      refused(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
    ).toBe(null);
    // a Postgres error: numeric SQLSTATE, no DB::Exception
    expect(refused(Object.assign(new Error('syntax error'), { code: '00062' }))).toBe(null);
    expect(refused(new TypeError('x is undefined'))).toBe(null);
    expect(refused('Code: 62.')).toBe(null);
  });
});
