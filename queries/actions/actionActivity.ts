import { z } from 'zod';
import {
  type ActionEvent,
  type ActionState,
  actionEventTypes,
  actionFieldNames,
  actionStream,
  evolveAction,
  initialActionState,
} from '../../commands/actions/model/action.ts';
import type { AccessReader } from '../../projections/access/accessReader.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { readAllEvents } from '../../src/eventStore/readAllEvents.ts';
import { type ActivityWindow, activityPage } from '../shared/activityPage.ts';

const Change = z.object({
  type: z.literal('Action'),
  action: z.enum(['created', 'changed', 'deleted']),
  field: z.string(),
  before: z.unknown(),
  after: z.unknown(),
});
type Change = z.infer<typeof Change>;

/** PostHog's activity log entry (scope `Action`), one per change a user made. */
export const ActionActivityEntry = z
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
    scope: z.literal('Action'),
    item_id: z.string(),
    detail: z.object({ id: z.string(), name: z.string().nullable(), changes: z.array(Change) }),
    created_at: z.string(),
  })
  .meta({ id: 'ActionActivityLogEntry' });
type Entry = Omit<z.infer<typeof ActionActivityEntry>, 'user'> & {
  userId?: number;
  position: bigint;
};

const change = (action: Change['action'], field: string, before: unknown, after: unknown) =>
  ({ type: 'Action', action, field, before, after }) satisfies Change;

/**
 * One entry per change to an action, folded from its stream with the decider's own `evolve`:
 * created (every field), updated (the changed fields, before and after; a restore too), deleted.
 */
export function actionActivityOf(events: readonly RecordedEvent<ActionEvent>[]): Entry[] {
  let state: ActionState = initialActionState();
  const entries: Entry[] = [];
  for (const event of events) {
    const before = state;
    state = evolveAction(state, event);
    if (state.status !== 'present') continue;
    const id = String(event.data.actionId);
    const entry = (activity: Entry['activity'], changes: Change[]): Entry => ({
      id: event.id,
      scope: 'Action',
      item_id: id,
      created_at: event.metadata.occurredAt,
      position: event.position,
      ...(event.metadata.userId !== undefined ? { userId: event.metadata.userId } : {}),
      activity,
      detail: {
        id,
        name: (state as { fields: { name: string } }).fields.name,
        changes,
      },
    });
    if (event.type === 'ActionCreated')
      entries.push(
        entry(
          'created',
          actionFieldNames.map((f) => change('created', f, null, event.data.fields[f])),
        ),
      );
    else if (event.type === 'ActionUpdated' && before.status === 'present')
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
  }
  return entries;
}

/** Activity of one action, newest first; undefined when it is not in this project. */
export async function actionActivity(
  store: EventStore,
  users: Pick<AccessReader, 'activityUsers'>,
  projectId: number,
  actionId: number,
  page: ActivityWindow,
) {
  const events = await store.readStream<ActionEvent>(actionStream(actionId));
  const created = events[0];
  if (created?.type !== 'ActionCreated' || created.data.projectId !== projectId) return undefined;
  return activityPage(users, actionActivityOf(events), page);
}

/** Activity of every action of a project, newest first, from the action streams. */
export async function allActionsActivity(
  store: EventStore,
  users: Pick<AccessReader, 'activityUsers'>,
  projectId: number,
  page: ActivityWindow,
) {
  const byStream = new Map<string, RecordedEvent<ActionEvent>[]>();
  for await (const e of readAllEvents(store, {
    streamPrefixes: ['action-'],
    eventTypes: actionEventTypes,
  })) {
    if (e.metadata.projectId !== undefined && e.metadata.projectId !== projectId) continue;
    const list = byStream.get(e.streamName) ?? [];
    list.push(e as RecordedEvent<ActionEvent>);
    byStream.set(e.streamName, list);
  }
  // A stream belongs to the project of its ActionCreated.
  const own = [...byStream.values()].filter(
    (events) => events[0]?.type === 'ActionCreated' && events[0].data.projectId === projectId,
  );
  return activityPage(users, own.flatMap(actionActivityOf), page);
}
