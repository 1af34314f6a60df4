import { z } from 'zod';
import {
  type CohortEvent,
  type CohortState,
  cohortDefinitionEventTypes,
  cohortStream,
  evolveCohort,
  initialCohortState,
} from '../../commands/cohorts/model/cohort.ts';
import type { AccessReader } from '../../projections/access/accessReader.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { readAllEvents } from '../../src/eventStore/readAllEvents.ts';
import { type ActivityWindow, activityPage } from '../shared/activityPage.ts';

const Change = z.object({
  type: z.literal('Cohort'),
  action: z.enum(['created', 'changed', 'deleted']),
  field: z.string(),
  before: z.unknown(),
  after: z.unknown(),
});
type Change = z.infer<typeof Change>;

export const CohortActivityEntry = z
  .object({
    id: z.string(),
    user: z
      .object({
        id: z.number().int(),
        first_name: z.string(),
        last_name: z.string(),
        email: z.string(),
      })
      .nullable(),
    activity: z.enum(['created', 'updated', 'deleted']),
    scope: z.literal('Cohort'),
    item_id: z.string(),
    detail: z.object({ id: z.string(), name: z.string().nullable(), changes: z.array(Change) }),
    created_at: z.string(),
  })
  .meta({ id: 'CohortActivityLogEntry' });
type Entry = Omit<z.infer<typeof CohortActivityEntry>, 'user'> & {
  userId?: number;
  position: bigint;
};
type Present = Extract<CohortState, { status: 'present' }>;

const FIELDS = ['name', 'description', 'filters'] as const;
const change = (
  action: Change['action'],
  field: string,
  before: unknown,
  after: unknown,
): Change => ({
  type: 'Cohort',
  action,
  field,
  before,
  after,
});

/**
 * One entry per change a user made to a cohort, folded from its stream: created, updated (the
 * fields with before/after; persons added from a CSV as `persons`), deleted. Membership
 * recalculations are the system's, not activity.
 */
export function cohortActivityOf(events: readonly RecordedEvent<CohortEvent>[]): Entry[] {
  let state = initialCohortState();
  let previous: RecordedEvent<CohortEvent> | undefined;
  const entries: Entry[] = [];
  for (const event of events) {
    const before = state;
    state = evolveCohort(state, event);
    if (state.status !== 'present') continue;
    const now = state as Present;
    const prev = before.status === 'present' ? (before as Present) : undefined;
    const cohortId = String(event.data.cohortId);
    const entry = (activity: Entry['activity'], changes: Change[]): Entry => ({
      id: event.id,
      scope: 'Cohort',
      item_id: cohortId,
      created_at: event.metadata.occurredAt,
      position: event.position,
      ...(event.metadata.userId !== undefined ? { userId: event.metadata.userId } : {}),
      activity,
      detail: { id: cohortId, name: now.fields.name, changes },
    });
    if (event.type === 'CohortCreated')
      entries.push(
        entry(
          'created',
          FIELDS.map((f) => change('created', f, null, event.data.fields[f])),
        ),
      );
    else if (event.type === 'CohortUpdated')
      entries.push(
        entry(
          'updated',
          FIELDS.filter((f) => f in event.data.changes).map((f) =>
            change('changed', f, prev?.fields[f] ?? null, event.data.changes[f]),
          ),
        ),
      );
    else if (event.type === 'CohortSoftDeleted')
      entries.push(entry('deleted', [change('deleted', 'deleted', false, true)]));
    else if (event.type === 'CohortPersonsAdded' && prev) {
      // Persons written by the request that created the cohort (or in several events of one
      // upload) belong to that request's entry.
      const added = event.data.personUuids.length;
      const last = entries.at(-1);
      const persons = last?.detail.changes.find((c) => c.field === 'persons');
      const sameRequest =
        previous !== undefined &&
        (previous.type === 'CohortCreated' || previous.type === 'CohortPersonsAdded') &&
        previous.metadata.correlationId === event.metadata.correlationId;
      if (last && sameRequest) {
        if (persons) persons.after = { added: (persons.after as { added: number }).added + added };
        else last.detail.changes.push(change('created', 'persons', null, { added }));
      } else entries.push(entry('updated', [change('changed', 'persons', null, { added })]));
    }
    previous = event;
  }
  return entries;
}

/** Activity of one cohort, newest first; undefined when it is not in this project. */
export async function cohortActivity(
  store: EventStore,
  users: Pick<AccessReader, 'activityUsers'>,
  projectId: number,
  cohortId: number,
  page: ActivityWindow,
) {
  const events = await store.readStream<CohortEvent>(cohortStream(cohortId));
  const created = events[0];
  if (created?.type !== 'CohortCreated' || created.data.projectId !== projectId) return undefined;
  return activityPage(users, cohortActivityOf(events), page);
}

/** Activity of every cohort of a project, newest first, from the cohort streams in log order. */
export async function allCohortsActivity(
  store: EventStore,
  users: Pick<AccessReader, 'activityUsers'>,
  projectId: number,
  page: ActivityWindow,
) {
  const byStream = new Map<string, RecordedEvent<CohortEvent>[]>();
  for await (const e of readAllEvents(store, {
    streamPrefixes: ['cohort-'],
    eventTypes: cohortDefinitionEventTypes,
  })) {
    if (e.metadata.projectId !== undefined && e.metadata.projectId !== projectId) continue;
    const list = byStream.get(e.streamName) ?? [];
    list.push(e as RecordedEvent<CohortEvent>);
    byStream.set(e.streamName, list);
  }
  // A stream belongs to the project of its CohortCreated.
  const own = [...byStream.values()].filter(
    (events) => events[0]?.type === 'CohortCreated' && events[0].data.projectId === projectId,
  );
  return activityPage(users, own.flatMap(cohortActivityOf), page);
}
