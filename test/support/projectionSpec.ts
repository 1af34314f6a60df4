import pg from 'pg';
import type { Event, EventMetadata, RecordedEvent } from '../../src/core/event.ts';
import type { PgProjection } from '../../src/processing/projection.ts';
import { createTestDatabase } from './testDatabase.ts';

/**
 * A Postgres projection on its own, in a fresh test database: "given these log events → these
 * rows". The projection's `schema` is applied, then each `given` call is one batch handed to
 * `handle` inside one transaction, as the runner does (no checkpoint, no subscription). Needs the
 * integration project's embedded Postgres.
 *
 *   const spec = await projectionSpec(eventDeletionsProjection);
 *   await spec.given(recorded([queued]));
 *   expect(await spec.rows('event_deletion_queue')).toEqual([...]);
 *   await spec.close();
 */
export type ProjectionSpec<E extends Event> = Readonly<{
  /** the database's pool, for readers under test */
  pool: pg.Pool;
  /** applies the events as one batch, in one transaction */
  given(events: readonly RecordedEvent<E>[]): Promise<void>;
  /** every row of a table, ordered by `orderBy` (SQL; default the first column) */
  rows(table: string, orderBy?: string): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}>;

export async function projectionSpec<E extends Event>(
  projection: PgProjection<E>,
): Promise<ProjectionSpec<E>> {
  const pool = new pg.Pool({ connectionString: await createTestDatabase(), max: 2 });
  await pool.query(projection.schema);
  return {
    pool,
    async given(events) {
      const tx = await pool.connect();
      try {
        await tx.query('BEGIN');
        await projection.handle(events, tx);
        await tx.query('COMMIT');
      } catch (error) {
        await tx.query('ROLLBACK');
        throw error;
      } finally {
        tx.release();
      }
    },
    async rows(table, orderBy = '1') {
      if (!projection.tables.includes(table))
        throw new Error(`${projection.name} has no table ${table}`);
      return (await pool.query(`SELECT * FROM ${table} ORDER BY ${orderBy}`)).rows;
    },
    close: () => pool.end(),
  };
}

/**
 * Events as the log would hand them over: consecutive positions from `from` (default 1), ids
 * `e<position>` unless the event brings its own, one stream per event unless named.
 */
export function recorded<E extends Event>(
  events: readonly (E & { id?: string; streamName?: string; metadata?: EventMetadata })[],
  from = 1n,
): RecordedEvent<E>[] {
  return events.map((e, i) => {
    const position = from + BigInt(i);
    return {
      ...e,
      id: e.id ?? `e${position}`,
      streamName: e.streamName ?? `test-${position}`,
      revision: 0n,
      position,
      metadata: e.metadata ?? { occurredAt: '2024-01-01T00:00:00.000Z' },
      recordedAt: new Date('2024-01-01T00:00:00.000Z'),
    };
  });
}
