import { isStorable, parsePersonRef } from '../../commands/persons/model/personRef.ts';
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
  const ref = parsePersonRef(personId);
  if (!ref || !isStorable(ref)) return [];
  const { rows } = await pool.query<{ distinct_id: string }>(
    `SELECT d.distinct_id FROM persons p JOIN person_distinct_ids d ON d.person_id = p.id
      WHERE p.project_id = $1 AND ${ref.kind === 'id' ? 'p.id = $2::int' : 'p.uuid = $2::uuid'} ORDER BY d.ord`,
    [projectId, ref.kind === 'id' ? ref.id : ref.uuid],
  );
  return rows.map((r) => r.distinct_id);
}
