import type pg from 'pg';
import { personSummariesForDistinctIds } from '../persons/personSummary.ts';
import type { EventView } from './eventView.ts';

/** Each event with the summary of its distinct id's person (capture.md §4.2), from the persons read model. */
export async function withPersons(pool: pg.Pool, projectId: number, events: EventView[]): Promise<EventView[]> {
  const persons = await personSummariesForDistinctIds(pool, projectId, events.map((e) => e.distinct_id));
  return events.map((e) => ({ ...e, person: persons.get(e.distinct_id) ?? null }));
}

/**
 * `person_id` (integer id or UUID) → that person's distinct ids: events are filtered by them, so
 * events sent under any of a merged person's ids belong to it. An unknown person has none.
 */
export async function distinctIdsOfPerson(pool: pg.Pool, projectId: number, personId: string): Promise<string[]> {
  const isInt = /^\d{1,9}$/.test(personId);
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(personId);
  if (!isInt && !isUuid) return [];
  const { rows } = await pool.query<{ distinct_id: string }>(
    `SELECT d.distinct_id FROM persons p JOIN person_distinct_ids d ON d.person_id = p.id
      WHERE p.project_id = $1 AND ${isInt ? 'p.id = $2::int' : 'p.uuid = $2::uuid'} ORDER BY d.ord`,
    [projectId, personId],
  );
  return rows.map((r) => r.distinct_id);
}
