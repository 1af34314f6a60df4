import type pg from 'pg';
import type { RecordedEvent } from '../../src/core/event.ts';
import type { PgProjection } from '../../src/processing/projection.ts';
import { type PersonEventDeletionEvent, personEventDeletionTypes } from './personEvents.ts';

/**
 * The deletion job's to-do list and its record of what it did, both folded from the log:
 *
 * - `event_deletion_queue`: one row per PersonEventsDeletionQueued; `up_to_position` is that
 *   event's own log position (every captured event of the person's distinct ids below it goes);
 *   `deleted_at` is set when the matching PersonEventsDeleted arrives.
 * - `deleted_person_events`: (project, distinct id, up to position) of every completed deletion.
 *   The ClickHouse events projection reads it before each insert and leaves those events out, so
 *   replaying the log into ClickHouse does not bring deleted events back.
 */
export const eventDeletionsProjection: PgProjection = {
  name: 'event_deletions',
  version: 1,
  tables: ['event_deletion_queue', 'deleted_person_events'],
  filter: { eventTypes: personEventDeletionTypes },
  schema: `
    CREATE TABLE IF NOT EXISTS event_deletion_queue (
      id uuid PRIMARY KEY,
      project_id integer NOT NULL,
      person_uuid uuid NOT NULL,
      person_id integer,
      distinct_ids text[] NOT NULL,
      up_to_position bigint NOT NULL,
      queued_at timestamptz NOT NULL,
      deleted_at timestamptz,
      deleted_position bigint
    );
    CREATE INDEX IF NOT EXISTS event_deletion_queue_pending ON event_deletion_queue (up_to_position) WHERE deleted_at IS NULL;
    CREATE TABLE IF NOT EXISTS deleted_person_events (
      project_id integer NOT NULL,
      distinct_id text NOT NULL,
      up_to_position bigint NOT NULL,
      PRIMARY KEY (project_id, distinct_id, up_to_position)
    );
    CREATE INDEX IF NOT EXISTS deleted_person_events_up_to ON deleted_person_events (up_to_position);
  `,
  async handle(events, tx) {
    for (const e of events as readonly RecordedEvent<PersonEventDeletionEvent>[]) {
      if (e.type === 'PersonEventsDeletionQueued') {
        await tx.query(
          `INSERT INTO event_deletion_queue (id, project_id, person_uuid, person_id, distinct_ids, up_to_position, queued_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
          [e.id, e.data.projectId, e.data.personUuid, e.data.personId ?? null, e.data.distinctIds, e.position.toString(), e.data.at],
        );
      } else {
        await tx.query(
          'UPDATE event_deletion_queue SET deleted_at = $2, deleted_position = $3 WHERE id = $1 AND deleted_at IS NULL',
          [e.data.queuedEventId, e.data.at, e.position.toString()],
        );
        await tx.query(
          `INSERT INTO deleted_person_events (project_id, distinct_id, up_to_position)
           SELECT $1, d, $3 FROM unnest($2::text[]) AS d ON CONFLICT DO NOTHING`,
          [e.data.projectId, e.data.distinctIds, e.data.upToPosition],
        );
      }
    }
  },
};

/** `${projectId}|${distinctId}` → the highest log position up to which its events were deleted. */
export type DeletedEvents = ReadonlyMap<string, bigint>;
export const deletedEventsKey = (projectId: number, distinctId: string) => `${projectId}|${distinctId}`;

/**
 * Deletions that reach `fromPosition` or later: the only ones that can hide an event of a batch
 * starting there. Live batches come after every deletion, so this is usually an empty index scan.
 */
export const deletedEventsLookup = (pool: pg.Pool) => async (fromPosition: bigint): Promise<DeletedEvents> => {
  const { rows } = await pool.query<{ project_id: number; distinct_id: string; up_to: string }>(
    `SELECT project_id, distinct_id, max(up_to_position) AS up_to FROM deleted_person_events
      WHERE up_to_position >= $1 GROUP BY project_id, distinct_id`,
    [fromPosition.toString()],
  );
  return new Map(rows.map((r) => [deletedEventsKey(r.project_id, r.distinct_id), BigInt(r.up_to)]));
};

export type QueuedDeletion = { id: string; projectId: number; personUuid: string; distinctIds: string[]; upToPosition: bigint };

/** Pending entries whose events the ClickHouse projection has already written (up to `reached`), oldest first. */
export async function pendingDeletions(pool: pg.Pool, reached: bigint, limit: number, skip: readonly string[]): Promise<QueuedDeletion[]> {
  const { rows } = await pool.query<{ id: string; project_id: number; person_uuid: string; distinct_ids: string[]; up_to_position: string }>(
    `SELECT id, project_id, person_uuid::text AS person_uuid, distinct_ids, up_to_position FROM event_deletion_queue
      WHERE deleted_at IS NULL AND up_to_position <= $1 AND NOT (id = ANY($2::uuid[]))
      ORDER BY up_to_position LIMIT $3`,
    [reached.toString(), skip, limit],
  );
  return rows.map((r) => ({ id: r.id, projectId: r.project_id, personUuid: r.person_uuid, distinctIds: r.distinct_ids, upToPosition: BigInt(r.up_to_position) }));
}

export async function countWaitingDeletions(pool: pg.Pool, reached: bigint): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM event_deletion_queue WHERE deleted_at IS NULL AND up_to_position > $1',
    [reached.toString()],
  );
  return Number(rows[0]!.n);
}
