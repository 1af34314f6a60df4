import type { PersonRecord } from '../../queries/persons/personView.ts';
import type { PersonFacts } from './personDecider.ts';

/**
 * The facts a person decision needs, from the person as the read model shows it (the write routes
 * read it through the persons query slice). Distinct ids in attachment order (oldest first), as
 * the split rule needs them.
 */
export const factsOf = (record: PersonRecord): PersonFacts => ({
  id: record.id,
  uuid: record.uuid,
  distinctIds: record.distinct_ids,
  properties: record.properties ?? {},
});
