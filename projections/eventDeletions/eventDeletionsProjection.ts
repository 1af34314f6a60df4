import {
  type PersonEventDeletionEvent,
  personEventDeletionTypes,
} from '../../commands/persons/model/personEvents.ts';
import { pgProjection } from '../../src/processing/projection.ts';

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
export const eventDeletionsProjection = pgProjection<PersonEventDeletionEvent>({
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
    for (const e of events) {
      if (e.type === 'PersonEventsDeletionQueued') {
        await tx.query(
          `INSERT INTO event_deletion_queue (id, project_id, person_uuid, person_id, distinct_ids, up_to_position, queued_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
          [
            e.id,
            e.data.projectId,
            e.data.personUuid,
            e.data.personId ?? null,
            e.data.distinctIds,
            e.position.toString(),
            e.data.at,
          ],
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
});
