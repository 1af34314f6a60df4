import path from 'node:path';
import { runner } from 'node-pg-migrate';
import type pg from 'pg';

/** Applied migrations of the log, one row each (node-pg-migrate's table). */
export const EVENT_LOG_MIGRATIONS_TABLE = 'event_log_migrations';

/**
 * Brings the Postgres event log's schema up to date with the versioned migrations in
 * `migrations/` (node-pg-migrate: applied in order, each once, recorded in
 * `event_log_migrations`, under its advisory lock so a server and the CLI starting together do
 * not both run one). Stored events are never rewritten by a migration: an event whose shape
 * changes gets a new type, or an upcaster where it is read.
 */
export async function migrateEventLog(pool: pg.Pool): Promise<string[]> {
  const client = await pool.connect();
  try {
    const applied = await runner({
      dbClient: client,
      dir: path.join(import.meta.dirname, 'migrations'),
      // compiled builds sit next to their source maps
      ignorePattern: '(\\..*)|(.*\\.map)',
      migrationsTable: EVENT_LOG_MIGRATIONS_TABLE,
      direction: 'up',
      count: Number.POSITIVE_INFINITY,
      checkOrder: true,
      // a second starter (the CLI beside a starting server) waits for the first, then finds nothing to do
      advisoryLockMode: 'wait',
      log: () => undefined,
    });
    return applied.map((m) => m.name);
  } finally {
    client.release();
  }
}
