import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsProjection } from '../../projections/events/eventsProjection.ts';
import { chProjection, createTables } from '../../src/processing/clickhouseProjection.ts';
import { type ClickHouse, openClickHouse } from '../../src/runtime/clickhouse.ts';

// Issue #27: the events table is written with fewer merges (compact parts, a wider merge base).
// The settings reach new tables, tables an earlier release created, and skip what a server lacks.
let ch: ClickHouse;
beforeAll(async () => {
  ch = await openClickHouse(
    undefined,
    path.join(os.tmpdir(), `hogstream-chdb-${process.pid}`),
    'table_settings',
  );
});
afterAll(async () => {
  await ch?.close();
});

const createQuery = async (table: string) => {
  const result = await ch.client.query({
    query:
      'SELECT create_table_query AS q FROM system.tables WHERE database = {db:String} AND name = {t:String}',
    query_params: { db: ch.database, t: table },
    format: 'JSONEachRow',
  });
  return ((await result.json()) as { q: string }[])[0]?.q ?? '';
};

describe('ClickHouse table settings', () => {
  it('are set on a table created now and on one an earlier release created without them', async () => {
    await createTables(ch, eventsProjection, ch.database);
    expect(await createQuery('events')).toMatch(
      /min_bytes_for_wide_part = 268435456.*merge_selector_base = 8|merge_selector_base = 8.*min_bytes_for_wide_part = 268435456/,
    );
    await ch.client.command({ query: `DROP TABLE ${ch.database}.events` });
    for (const statement of eventsProjection.ddl(ch.database))
      await ch.client.command({ query: statement });
    expect(await createQuery('events')).not.toContain('merge_selector_base');
    await createTables(ch, eventsProjection, ch.database);
    expect(await createQuery('events')).toContain('merge_selector_base = 8');
  });

  it('leaves out a setting the server does not know, and sets the others', async () => {
    const probe = chProjection({
      ...eventsProjection,
      name: 'probe',
      ddl: (db) => [
        `CREATE TABLE IF NOT EXISTS ${db}.probe (n UInt8) ENGINE = MergeTree ORDER BY n`,
      ],
      tables: ['probe'],
      tableSettings: { probe: { a_setting_from_a_later_release: 1, merge_selector_base: 7 } },
    });
    await createTables(ch, probe, ch.database);
    const query = await createQuery('probe');
    expect(query).toContain('merge_selector_base = 7');
    expect(query).not.toContain('a_setting_from_a_later_release');
  });
});
