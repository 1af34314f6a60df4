import type pg from 'pg';
import { ApiError } from '../../src/http/apiError.ts';
import { getPerson, parsePersonRef, type PersonRef } from '../../queries/persons/personQueries.ts';
import { type PersonRecord, toPersonView } from '../../queries/persons/personView.ts';
import type { PersonFacts } from './personDecider.ts';

export { PersonView } from '../../queries/persons/personView.ts';

/**
 * What the write routes read from the persons read model, through the persons query slice: the
 * facts a decision needs, and the person they answer with (the same view GET persons/:id/ shows).
 */
export function personRefOf(raw: string): PersonRef {
  const ref = parsePersonRef(raw);
  if (!ref) {
    throw new ApiError(400, {
      type: 'validation_error',
      code: 'invalid',
      detail: `The ID provided does not look like a personID. If you are using a distinctId, please use /persons?distinct_id=${raw} instead.`,
      attr: null,
    });
  }
  return ref;
}

export const readPerson = (pool: pg.Pool, projectId: number, ref: PersonRef): Promise<PersonRecord | null> => getPerson(pool, projectId, ref);

export const viewOf = toPersonView;

/** Distinct ids in attachment order (oldest first), as the split rule needs them. */
export const factsOf = (record: PersonRecord): PersonFacts => ({
  id: record.id,
  uuid: record.uuid,
  distinctIds: record.distinct_ids,
  properties: record.properties ?? {},
});
