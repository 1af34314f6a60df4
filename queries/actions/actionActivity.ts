import {
  type ActionEvent,
  actionEventTypes,
  actionFieldNames,
  actionStream,
  evolveAction,
} from '../../commands/actions/model/action.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import {
  activityChangeSchema,
  activityEntrySchema,
  activityReaders,
  fieldsResourceActivity,
} from '../shared/resourceActivity.ts';

const Change = activityChangeSchema('Action');

/** PostHog's activity log entry (scope `Action`), one per change a user made. */
export const ActionActivityEntry = activityEntrySchema({
  id: 'ActionActivityLogEntry',
  scope: 'Action',
  activities: ['created', 'updated', 'deleted'],
  change: Change,
});

/**
 * One entry per change to an action, folded from its stream with the decider's own `evolve`:
 * created (every field), updated (the changed fields, before and after), deleted, and a restore
 * (logged as an update of `deleted`, as PostHog does).
 */
export const actionActivityOf = fieldsResourceActivity({
  scope: 'Action',
  entry: ActionActivityEntry,
  fieldNames: actionFieldNames,
  evolve: evolveAction,
  itemId: (event: RecordedEvent<ActionEvent>) => event.data.actionId,
  name: (fields) => fields.name,
  restoredAs: 'updated',
});

/** Action activity: of one action (undefined when not in this project), of a project's actions. */
export const { one: actionActivity, all: allActionsActivity } = activityReaders({
  stream: actionStream,
  streamPrefix: 'action-',
  eventTypes: actionEventTypes,
  createdType: 'ActionCreated',
  fold: actionActivityOf,
});
