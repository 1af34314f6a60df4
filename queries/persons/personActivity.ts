import { z } from 'zod';
import {
  PERSON_CATEGORY,
  type PersonEvent,
  personEventTypes,
} from '../../commands/persons/model/personEvents.ts';
import type { AccessReader } from '../../projections/access/accessReader.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { readAllEvents } from '../../src/eventStore/readAllEvents.ts';
import { type ActivityWindow, activityPage } from '../shared/activityPage.ts';
import {
  activityEntrySchema,
  changeMaker,
  entryBase,
  type RawActivityEntry,
} from '../shared/resourceActivity.ts';

export const PersonActivityChange = z.object({
  type: z.literal('Person'),
  action: z.enum(['changed', 'split', 'deleted']),
  field: z.string().nullable(),
  before: z.unknown(),
  after: z.unknown(),
});

export const PersonActivityEntry = activityEntrySchema({
  id: 'PersonActivityLogEntry',
  scope: 'Person',
  activities: ['updated', 'delete_property', 'split_person', 'deleted'],
  change: PersonActivityChange,
  describe: {
    item_id: "the person's integer id (its uuid for entries written without one)",
    name: 'the person uuid',
  },
});
export type PersonActivityEntry = z.infer<typeof PersonActivityEntry>;
type Change = z.infer<typeof PersonActivityChange>;
type RawEntry = RawActivityEntry<typeof PersonActivityEntry>;

const change = changeMaker<'Person', Change['action'], string | null>('Person');

/**
 * One entry per person management event, from the event alone: each carries what the decision
 * saw (`before` values, the distinct ids split or deleted), so no fold of the person is needed.
 */
export function personActivityOf(event: RecordedEvent<PersonEvent>): RawEntry {
  const d = event.data;
  const itemId = d.personId !== undefined ? String(d.personId) : d.personUuid;
  const base = entryBase(event, 'Person', itemId);
  const detail = (changes: Change[]) => ({ id: itemId, name: d.personUuid, changes });
  switch (event.type) {
    case 'PersonPropertiesUpdated': {
      const before = event.data.before ?? {};
      const was = Object.fromEntries(
        Object.keys(event.data.set).map((k) => [k, k in before ? before[k] : null]),
      );
      return {
        ...base,
        activity: 'updated',
        detail: detail([change('changed', 'properties', was, event.data.set)]),
      };
    }
    case 'PersonPropertyDeleted':
      return {
        ...base,
        activity: 'delete_property',
        detail: detail([
          change('changed', 'properties', { [event.data.key]: event.data.before ?? null }, {}),
        ]),
      };
    case 'PersonSplit': {
      const all = [event.data.keepDistinctId, ...event.data.splitDistinctIds];
      return {
        ...base,
        activity: 'split_person',
        detail: detail([
          change('split', null, null, {
            distinct_ids: all,
            main_distinct_id: event.data.keepDistinctId,
            properties_wiped: event.data.wipeProperties,
          }),
        ]),
      };
    }
    case 'PersonDeleted':
      return {
        ...base,
        activity: 'deleted',
        detail: detail([
          change(
            'deleted',
            null,
            { distinct_ids: event.data.distinctIds },
            { delete_events: event.data.deleteEvents },
          ),
        ]),
      };
  }
}

/** Which person's entries: by integer id (events record it), or by uuid for events without one. */
export type PersonSelector = { personId?: number; personUuid?: string };

const matches = (s: PersonSelector, d: PersonEvent['data']) =>
  d.personId !== undefined && s.personId !== undefined
    ? d.personId === s.personId
    : s.personUuid !== undefined && d.personUuid === s.personUuid;

/**
 * Person activity of a project, newest first, read from the person streams of the log (one scan
 * of the indexed event types). With `only`, the entries of one person.
 */
export async function personActivity(
  store: EventStore,
  users: Pick<AccessReader, 'activityUsers'>,
  projectId: number,
  page: ActivityWindow,
  only?: PersonSelector,
): Promise<{ count: number; results: PersonActivityEntry[] }> {
  const entries: RawEntry[] = [];
  for await (const e of readAllEvents(store, {
    streamPrefixes: [`${PERSON_CATEGORY}-`],
    eventTypes: personEventTypes,
  })) {
    const event = e as RecordedEvent<PersonEvent>;
    if (event.data.projectId !== projectId || (only && !matches(only, event.data))) continue;
    entries.push(personActivityOf(event));
  }
  return activityPage(users, entries, page);
}
