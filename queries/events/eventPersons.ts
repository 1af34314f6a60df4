import type pg from 'pg';
import { parsePersonRef } from '../../commands/persons/model/personRef.ts';
import { personsReader } from '../../projections/persons/personsReader.ts';
import type { EventView } from './eventView.ts';

/** Each event with the summary of its distinct id's person (capture.md §4.2), from the persons read model. */
export async function withPersons(
  pool: pg.Pool,
  projectId: number,
  events: EventView[],
): Promise<EventView[]> {
  const persons = await personsReader(pool).summariesForDistinctIds(
    projectId,
    events.map((e) => e.distinct_id),
  );
  return events.map((e) => ({ ...e, person: persons.get(e.distinct_id) ?? null }));
}

/**
 * `person_id` (integer id or UUID) → that person's distinct ids: events are filtered by them, so
 * events sent under any of a merged person's ids belong to it. An unknown person has none.
 */
export async function distinctIdsOfPerson(
  pool: pg.Pool,
  projectId: number,
  personId: string,
): Promise<string[]> {
  const ref = parsePersonRef(personId);
  return ref ? personsReader(pool).distinctIdsOf(projectId, ref) : [];
}
