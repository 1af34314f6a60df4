import type { z } from 'zod';
import {
  type ActionEvent,
  actionEventTypes,
  actionFieldNames,
  actionStream,
  evolveAction,
  initialActionState,
} from '../../commands/actions/model/action.ts';
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

const Change = activityChangeSchema('Action');
type Change = z.infer<typeof Change>;

/** PostHog's activity log entry (scope `Action`), one per change a user made. */
export const ActionActivityEntry = activityEntrySchema({
  id: 'ActionActivityLogEntry',
  scope: 'Action',
  activities: ['created', 'updated', 'deleted'],
  change: Change,
});
type Entry = RawActivityEntry<typeof ActionActivityEntry>;

const change = changeMaker('Action');

/**
 * One entry per change to an action, folded from its stream with the decider's own `evolve`:
 * created (every field), updated (the changed fields, before and after; a restore too), deleted.
 */
export function actionActivityOf(events: readonly RecordedEvent<ActionEvent>[]): Entry[] {
  return foldActivity(
    events,
    initialActionState(),
    evolveAction,
    (entries: Entry[], event, now, before) => {
      const id = String(event.data.actionId);
      const entry = (activity: Entry['activity'], changes: Change[]): Entry => ({
        ...entryBase(event, 'Action', id),
        activity,
        detail: { id, name: now.fields.name, changes },
      });
      if (event.type === 'ActionCreated')
        entries.push(
          entry(
            'created',
            actionFieldNames.map((f) => change('created', f, null, event.data.fields[f])),
          ),
        );
      else if (event.type === 'ActionUpdated' && before)
        entries.push(
          entry(
            'updated',
            actionFieldNames
              .filter((f) => Object.hasOwn(event.data.changes, f))
              .map((f) => change('changed', f, before.fields[f], event.data.changes[f])),
          ),
        );
      else if (event.type === 'ActionSoftDeleted')
        entries.push(entry('deleted', [change('deleted', 'deleted', false, true)]));
      else if (event.type === 'ActionRestored')
        // PostHog logs a restore as an update of `deleted`
        entries.push(entry('updated', [change('changed', 'deleted', true, false)]));
    },
  );
}

/** Action activity: of one action (undefined when not in this project), of a project's actions. */
export const { one: actionActivity, all: allActionsActivity } = activityReaders({
  stream: actionStream,
  streamPrefix: 'action-',
  eventTypes: actionEventTypes,
  createdType: 'ActionCreated',
  fold: actionActivityOf,
});
