import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  EVENT_LOG_MIGRATIONS_TABLE,
  migrateEventLog,
} from '../../src/eventStore/eventLogMigrations.ts';
import { eventLogSchema } from '../../src/eventStore/postgresEventStore.ts';
import { createTestDatabase } from '../support/testDatabase.ts';

// Issue #12 (upgrade path): the Postgres log's schema is changed by versioned migrations
// (node-pg-migrate), each applied once and recorded, including on a log an earlier release made.
const pools: pg.Pool[] = [];
afterAll(async () => {
  for (const p of pools) await p.end();
});
const pool = async () => {
  const p = new pg.Pool({ connectionString: await createTestDatabase() });
  pools.push(p);
  return p;
};
const recorded = async (p: pg.Pool) =>
  (
    await p.query<{ name: string }>(`SELECT name FROM ${EVENT_LOG_MIGRATIONS_TABLE} ORDER BY id`)
  ).rows.map((r) => r.name);

const ALL = ['0001_event-log', '0002_event-log-inline-rows'];

describe('event log migrations', () => {
  it('creates the log on an empty database, records it, and applies nothing the second time', async () => {
    const p = await pool();
    expect(await migrateEventLog(p)).toEqual(ALL);
    expect(await recorded(p)).toEqual(ALL);
    const columns = await p.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'event_log' ORDER BY ordinal_position`,
    );
    expect(columns.rows.map((r) => r.column_name)).toEqual([
      'position',
      'id',
      'stream_name',
      'revision',
      'type',
      'data',
      'metadata',
      'recorded_at',
    ]);
    expect(await migrateEventLog(p)).toEqual([]);
    expect(await recorded(p)).toEqual(ALL);
  });

  it('takes a log an earlier release created (without migrations) as it is, events kept', async () => {
    const p = await pool();
    await p.query(eventLogSchema);
    await p.query(
      `INSERT INTO event_log (id, stream_name, revision, type, data, metadata)
       VALUES (gen_random_uuid(), 's-1', 0, 'Old', '{}', '{"occurredAt":"2026-01-01T00:00:00Z"}')`,
    );
    expect(await migrateEventLog(p)).toEqual(ALL);
    expect((await p.query('SELECT type FROM event_log')).rows).toEqual([{ type: 'Old' }]);
  });

  it('lets only one of two starters run a migration', async () => {
    const p = await pool();
    const [a, b] = await Promise.all([migrateEventLog(p), migrateEventLog(p)]);
    expect([...a, ...b].sort()).toEqual(ALL);
    expect(await recorded(p)).toEqual(ALL);
  });

  it('stores a captured record of 2 to 4 KB without pglz: lz4 where Postgres has it, else inline', async () => {
    const p = await pool();
    await migrateEventLog(p);
    const data = JSON.stringify({ properties: { text: 'x'.repeat(3000) } });
    await p.query(
      `INSERT INTO event_log (id, stream_name, revision, type, data, metadata)
       VALUES (gen_random_uuid(), 's-1', 0, 'EventCaptured', $1, '{}')`,
      [data],
    );
    const stored = await p.query<{ size: number; method: string | null }>(
      `SELECT pg_column_size(data) AS size, pg_column_compression(data) AS method FROM event_log`,
    );
    const lz4 = await p
      .query(
        `SELECT 'a'::text COLLATE "C" AS x INTO TEMP lz4_probe; ALTER TABLE lz4_probe ALTER COLUMN x SET COMPRESSION lz4`,
      )
      .then(
        () => true,
        () => false,
      );
    expect(stored.rows[0]!.method).toBe(lz4 ? 'lz4' : null);
    if (!lz4) expect(stored.rows[0]!.size).toBe(data.length + 4);
  });
});
