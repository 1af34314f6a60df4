import type { z } from 'zod';
import {
  type CohortEvent,
  cohortDefinitionEventTypes,
  cohortStream,
  evolveCohort,
  initialCohortState,
} from '../../commands/cohorts/model/cohort.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import {
  activityChangeSchema,
  activityEntrySchema,
  activityReaders,
  changeMaker,
  entryBase,
  foldActivity,
  type RawActivityEntry,
} from '../shared/resourceActivity.ts';

const Change = activityChangeSchema('Cohort');
type Change = z.infer<typeof Change>;

export const CohortActivityEntry = activityEntrySchema({
  id: 'CohortActivityLogEntry',
  scope: 'Cohort',
  activities: ['created', 'updated', 'deleted'],
  change: Change,
});
type Entry = RawActivityEntry<typeof CohortActivityEntry>;

const FIELDS = ['name', 'description', 'filters'] as const;
const change = changeMaker('Cohort');

/**
 * One entry per change a user made to a cohort, folded from its stream: created, updated (the
 * fields with before/after; persons added from a CSV as `persons`), deleted. Membership
 * recalculations are the system's, not activity.
 */
export function cohortActivityOf(events: readonly RecordedEvent<CohortEvent>[]): Entry[] {
  let previous: RecordedEvent<CohortEvent> | undefined;
  return foldActivity(
    events,
    initialCohortState(),
    evolveCohort,
    (entries: Entry[], event, now, prev) => {
      const cohortId = String(event.data.cohortId);
      const entry = (activity: Entry['activity'], changes: Change[]): Entry => ({
        ...entryBase(event, 'Cohort', cohortId),
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
          if (persons)
            persons.after = { added: (persons.after as { added: number }).added + added };
          else last.detail.changes.push(change('created', 'persons', null, { added }));
        } else entries.push(entry('updated', [change('changed', 'persons', null, { added })]));
      }
      previous = event;
    },
  );
}

/** Cohort activity: of one cohort (undefined when not in this project), of a project's cohorts. */
export const { one: cohortActivity, all: allCohortsActivity } = activityReaders({
  stream: cohortStream,
  streamPrefix: 'cohort-',
  eventTypes: cohortDefinitionEventTypes,
  createdType: 'CohortCreated',
  fold: cohortActivityOf,
});
