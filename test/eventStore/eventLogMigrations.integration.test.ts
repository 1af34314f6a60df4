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

describe('event log migrations', () => {
  it('creates the log on an empty database, records it, and applies nothing the second time', async () => {
    const p = await pool();
    expect(await migrateEventLog(p)).toEqual(['0001_event-log']);
    expect(await recorded(p)).toEqual(['0001_event-log']);
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
    expect(await recorded(p)).toEqual(['0001_event-log']);
  });

  it('takes a log an earlier release created (without migrations) as it is, events kept', async () => {
    const p = await pool();
    await p.query(eventLogSchema);
    await p.query(
      `INSERT INTO event_log (id, stream_name, revision, type, data, metadata)
       VALUES (gen_random_uuid(), 's-1', 0, 'Old', '{}', '{"occurredAt":"2026-01-01T00:00:00Z"}')`,
    );
    expect(await migrateEventLog(p)).toEqual(['0001_event-log']);
    expect((await p.query('SELECT type FROM event_log')).rows).toEqual([{ type: 'Old' }]);
  });

  it('lets only one of two starters run a migration', async () => {
    const p = await pool();
    const [a, b] = await Promise.all([migrateEventLog(p), migrateEventLog(p)]);
    expect([...a, ...b]).toEqual(['0001_event-log']);
    expect(await recorded(p)).toEqual(['0001_event-log']);
  });
});
