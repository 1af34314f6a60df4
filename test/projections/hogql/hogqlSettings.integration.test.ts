import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HogQLError, HogQLTimeoutError } from '../../../projections/hogql/errors.ts';
import {
  HOGQL_SETTINGS,
  MAX_LIMIT,
  MAX_RESULT_BYTES,
  runCompiled,
} from '../../../projections/hogql/run.ts';
import { type ClickHouse, openClickHouse } from '../../../src/runtime/clickhouse.ts';

/**
 * Which of the per-query limits chDB honours through the client, and what each failure becomes:
 * each limit is set low enough for a small statement to cross it, as runHogQL sets them.
 */
let ch: ClickHouse;
beforeAll(async () => {
  ch = await openClickHouse(
    undefined,
    path.join(os.tmpdir(), `hogstream-chdb-${process.pid}`),
    'hogql_settings',
  );
});
afterAll(() => ch?.close());

const failure = async (query: string, settings: Record<string, unknown>) => {
  const error = await runCompiled(ch, query, settings).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, query).toBeDefined();
  // the next statement reads its own rows (chDB would hand it what the failed one had written)
  const next = await ch.client.query({ query: 'SELECT 1 AS x', format: 'JSONEachRow' });
  expect(await next.text()).toBe('{"x":1}\n');
  return error as Error;
};

describe('HogQL settings on chDB', () => {
  it('stops at max_execution_time: a 504 with a clear detail', async () => {
    const e = await failure('SELECT count() FROM numbers(100000000000)', {
      max_execution_time: 0.05,
    });
    expect(e).toBeInstanceOf(HogQLTimeoutError);
    expect((e as HogQLTimeoutError).statusCode).toBe(504);
  });

  it.each([
    [
      'max_memory_usage',
      'SELECT groupArray(number) FROM numbers(10000000)',
      { max_memory_usage: 1_000_000 },
      /MEMORY_LIMIT_EXCEEDED/,
    ],
    [
      'max_result_rows',
      'SELECT number FROM numbers(10)',
      { max_result_rows: 3 },
      /TOO_MANY_ROWS_OR_BYTES/,
    ],
    [
      'max_result_bytes',
      'SELECT number, repeat(toString(number), 100) FROM numbers(1000)',
      { max_result_bytes: 10_000 },
      /answer is larger than its limit of 64 MiB \(max_result_bytes; it reached [\d.]+ KiB\): select fewer/,
    ],
    ['max_ast_depth', 'SELECT ((((1))))', { max_ast_depth: 3 }, /TOO_DEEP_AST/],
    ['max_ast_elements', 'SELECT 1+1+1+1+1+1+1+1', { max_ast_elements: 5 }, /TOO_BIG_AST/],
    [
      'max_expanded_ast_elements',
      'SELECT 1+1+1+1+1+1+1+1',
      { max_expanded_ast_elements: 5 },
      /too big/,
    ],
  ])('honours %s: a 400 naming it', async (_name, query, settings, message) => {
    const e = await failure(query, settings);
    expect(e).toBeInstanceOf(HogQLError);
    expect(e.message).toMatch(message);
  });

  it('bounds every answer: rows, and bytes in memory (documented in run.ts)', () => {
    expect(HOGQL_SETTINGS.max_result_rows).toBe(MAX_LIMIT + 2);
    expect(HOGQL_SETTINGS.max_result_bytes).toBe(MAX_RESULT_BYTES);
    expect(MAX_RESULT_BYTES).toBe(64 * 1024 * 1024);
  });

  it('leaves the limits to the statement that set them', async () => {
    await failure('SELECT 1+1+1+1+1+1+1+1', { max_ast_elements: 5 });
    const r = await runCompiled(ch, 'SELECT 1+1+1+1+1+1+1+1 AS x', {});
    expect(r.data).toEqual([[8]]);
  });
});
