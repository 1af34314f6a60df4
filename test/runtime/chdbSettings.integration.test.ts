import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClickHouse, openClickHouse } from '../../src/runtime/clickhouse.ts';

// chDB's adapter applies a statement's settings with `SET`, which outlives the statement in its
// one session; openClickHouse scopes them to the statement again (src/runtime/chdbSettings.ts).
let ch: ClickHouse;
beforeAll(async () => {
  ch = await openClickHouse(
    undefined,
    path.join(os.tmpdir(), `hogstream-chdb-${process.pid}`),
    'settings_scope',
  );
});
afterAll(async () => {
  await ch?.close();
});

const setting = async (name: string) => {
  const r = await ch.client.query({
    query: 'SELECT toString(getSetting({name:String}))',
    query_params: { name },
    format: 'JSONCompactEachRow',
  });
  return ((await r.json()) as [string][])[0]![0];
};

describe('settings on embedded chDB', () => {
  it("end with the statement: a user query's limits do not bound the next one", async () => {
    const before = await setting('max_execution_time');
    await ch.client.query({
      query: 'SELECT 1',
      format: 'JSONEachRow',
      clickhouse_settings: { max_execution_time: 7, max_memory_usage: '123456789' },
    });
    expect(await setting('max_execution_time')).toBe(before);
    expect(await setting('max_memory_usage')).toBe('0');
  });

  it("a deduplication token does not make another insert's rows count as duplicates", async () => {
    const table = `${ch.database}.dedup`;
    await ch.client.command({
      query: `CREATE TABLE ${table} (n UInt32) ENGINE = MergeTree ORDER BY n
        SETTINGS non_replicated_deduplication_window = 100`,
    });
    await ch.client.insert({
      table,
      values: [{ n: 1 }],
      format: 'JSONEachRow',
      clickhouse_settings: { insert_deduplication_token: 'batch-1' },
    });
    // as a rebuild writes its shadow tables: no token, no deduplication
    for (const n of [2, 3])
      await ch.client.insert({
        table,
        values: [{ n }],
        format: 'JSONEachRow',
        clickhouse_settings: { insert_deduplicate: 0 },
      });
    // and a retry with the first token is still recognised as one
    await ch.client.insert({
      table,
      values: [{ n: 1 }],
      format: 'JSONEachRow',
      clickhouse_settings: { insert_deduplication_token: 'batch-1' },
    });
    const r = await ch.client.query({
      query: `SELECT n FROM ${table} ORDER BY n`,
      format: 'JSONCompactEachRow',
    });
    expect(await r.json()).toEqual([[1], [2], [3]]);
  });
});
