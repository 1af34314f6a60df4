import { z } from 'zod';
import {
  type AnnotationEvent,
  type AnnotationState,
  annotationEventTypes,
  annotationFieldNames,
  annotationStream,
  evolveAnnotation,
  initialAnnotationState,
} from '../../commands/annotations/model/annotation.ts';
import type { AccessReader } from '../../projections/access/accessReader.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { readAllEvents } from '../../src/eventStore/readAllEvents.ts';
import { type ActivityWindow, activityPage } from '../shared/activityPage.ts';

const Change = z.object({
  type: z.literal('Annotation'),
  action: z.enum(['created', 'changed', 'deleted']),
  field: z.string(),
  before: z.unknown(),
  after: z.unknown(),
});
type Change = z.infer<typeof Change>;

/** PostHog's activity log entry (scope `Annotation`), one per change a user made. */
export const AnnotationActivityEntry = z
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
    activity: z.enum(['created', 'updated', 'deleted', 'restored']),
    scope: z.literal('Annotation'),
    item_id: z.string(),
    detail: z.object({ id: z.string(), name: z.string().nullable(), changes: z.array(Change) }),
    created_at: z.string(),
  })
  .meta({ id: 'AnnotationActivityLogEntry' });
type Entry = Omit<z.infer<typeof AnnotationActivityEntry>, 'user'> & {
  userId?: number;
  position: bigint;
};

const change = (action: Change['action'], field: string, before: unknown, after: unknown) =>
  ({ type: 'Annotation', action, field, before, after }) satisfies Change;

/**
 * One entry per change to an annotation, folded from its stream with the decider's own `evolve`:
 * created (every field), updated (the changed fields, before and after), deleted, restored.
 */
export function annotationActivityOf(events: readonly RecordedEvent<AnnotationEvent>[]): Entry[] {
  let state: AnnotationState = initialAnnotationState();
  const entries: Entry[] = [];
  for (const event of events) {
    const before = state;
    state = evolveAnnotation(state, event);
    if (state.status !== 'present') continue;
    const id = String(event.data.annotationId);
    const entry = (activity: Entry['activity'], changes: Change[]): Entry => ({
      id: event.id,
      scope: 'Annotation',
      item_id: id,
      created_at: event.metadata.occurredAt,
      position: event.position,
      ...(event.metadata.userId !== undefined ? { userId: event.metadata.userId } : {}),
      activity,
      detail: {
        id,
        name: (state as { fields: { content: string | null } }).fields.content,
        changes,
      },
    });
    if (event.type === 'AnnotationCreated')
      entries.push(
        entry(
          'created',
          annotationFieldNames.map((f) => change('created', f, null, event.data.fields[f])),
        ),
      );
    else if (event.type === 'AnnotationUpdated' && before.status === 'present')
      entries.push(
        entry(
          'updated',
          annotationFieldNames
            .filter((f) => Object.hasOwn(event.data.changes, f))
            .map((f) => change('changed', f, before.fields[f], event.data.changes[f])),
        ),
      );
    else if (event.type === 'AnnotationSoftDeleted')
      entries.push(entry('deleted', [change('deleted', 'deleted', false, true)]));
    else if (event.type === 'AnnotationRestored')
      entries.push(entry('restored', [change('changed', 'deleted', true, false)]));
  }
  return entries;
}

/** Activity of one annotation, newest first; undefined when it is not in this project. */
export async function annotationActivity(
  store: EventStore,
  users: Pick<AccessReader, 'activityUsers'>,
  projectId: number,
  annotationId: number,
  page: ActivityWindow,
) {
  const events = await store.readStream<AnnotationEvent>(annotationStream(annotationId));
  const created = events[0];
  if (created?.type !== 'AnnotationCreated' || created.data.projectId !== projectId)
    return undefined;
  return activityPage(users, annotationActivityOf(events), page);
}

/** Activity of every annotation of a project, newest first, from the annotation streams. */
export async function allAnnotationsActivity(
  store: EventStore,
  users: Pick<AccessReader, 'activityUsers'>,
  projectId: number,
  page: ActivityWindow,
) {
  const byStream = new Map<string, RecordedEvent<AnnotationEvent>[]>();
  for await (const e of readAllEvents(store, {
    streamPrefixes: ['annotation-'],
    eventTypes: annotationEventTypes,
  })) {
    if (e.metadata.projectId !== undefined && e.metadata.projectId !== projectId) continue;
    const list = byStream.get(e.streamName) ?? [];
    list.push(e as RecordedEvent<AnnotationEvent>);
    byStream.set(e.streamName, list);
  }
  // A stream belongs to the project of its AnnotationCreated.
  const own = [...byStream.values()].filter(
    (events) => events[0]?.type === 'AnnotationCreated' && events[0].data.projectId === projectId,
  );
  return activityPage(users, own.flatMap(annotationActivityOf), page);
}
