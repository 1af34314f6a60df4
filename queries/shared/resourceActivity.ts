import { z } from 'zod';
import {
  type FieldsResourceEvent,
  type FieldsResourceState,
  initialFieldsResourceState,
} from '../../commands/shared/model/fieldsResource.ts';
import type { AccessReader } from '../../projections/access/accessReader.ts';
import type { Event, RecordedEvent } from '../../src/core/event.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { readAllEvents } from '../../src/eventStore/readAllEvents.ts';
import { type ActivityWindow, activityPage } from './activityPage.ts';

/**
 * What every resource's activity log shares (PostHog's `ActivityLog` entry, one per change a user
 * made, read from the resource's stream): the entry schema, the change helper, the fold of a stream
 * with the resource's own `evolve`, and the readers of one resource and of all of a project's.
 * Each resource keeps only its own logic: which events make which entries.
 */

/** A change of one field in PostHog's shape; `action` is `created`, `changed` or `deleted`. */
export const activityChangeSchema = <const S extends string>(scope: S) =>
  z.object({
    type: z.literal(scope),
    action: z.enum(['created', 'changed', 'deleted']),
    field: z.string(),
    before: z.unknown(),
    after: z.unknown(),
  });

/**
 * PostHog's activity log entry of one scope, a component named `id` in the OpenAPI document.
 * `detail` is `{id, name, ...detail, changes}`; `describe` documents `item_id` and `detail.name`
 * where they are not what their names say. Each call builds fresh schemas, so no two components
 * share one (which the OpenAPI generator could turn into a shared definition).
 */
export function activityEntrySchema<
  const S extends string,
  const A extends readonly [string, ...string[]],
  C extends z.ZodType,
  X extends z.ZodRawShape = Record<never, never>,
>(o: {
  id: string;
  scope: S;
  activities: A;
  change: C;
  detail?: X;
  describe?: { item_id?: string; name?: string };
}) {
  const itemId = z.string();
  const name = z.string().nullable();
  const itemIdText = o.describe?.item_id;
  const nameText = o.describe?.name;
  return z
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
      activity: z.enum(o.activities),
      scope: z.literal(o.scope),
      item_id: itemIdText === undefined ? itemId : itemId.describe(itemIdText),
      detail: z.object({
        id: z.string(),
        name: nameText === undefined ? name : name.describe(nameText),
        ...(o.detail ?? ({} as X)),
        changes: z.array(o.change),
      }),
      created_at: z.string(),
    })
    .meta({ id: o.id });
}

/** An entry as a fold makes it: the acting user's id (resolved when paged) and the log position. */
export type RawActivityEntry<T extends z.ZodType> = Omit<z.infer<T>, 'user'> & {
  userId?: number;
  position: bigint;
};

/** One change as a fold makes it: what `activityChangeSchema` (or a scope's own) describes. */
export type ActivityChange<S extends string, A extends string, F extends string | null> = {
  type: S;
  action: A;
  field: F;
  before: unknown;
  after: unknown;
};

/** `change(action, field, before, after)` of one scope; the actions are PostHog's unless given. */
export const changeMaker =
  <
    S extends string,
    A extends string = 'created' | 'changed' | 'deleted',
    F extends string | null = string,
  >(
    type: S,
  ) =>
  (action: A, field: F, before: unknown, after: unknown): ActivityChange<S, A, F> => ({
    type,
    action,
    field,
    before,
    after,
  });

/** The part of an entry every event gives the same way: its id, time, author and position. */
export const entryBase = <const S extends string>(
  event: RecordedEvent,
  scope: S,
  itemId: string,
) => ({
  id: event.id,
  scope,
  item_id: itemId,
  created_at: event.metadata.occurredAt,
  position: event.position,
  ...(event.metadata.userId !== undefined ? { userId: event.metadata.userId } : {}),
});

type Present<S> = Extract<S, { status: 'present' }>;

/**
 * Folds a stream with the resource's own `evolve` (the decider's, so every field has its before
 * and after value) and lets `step` add the entries of each event that leaves the resource present;
 * `before` is the state ahead of the event when the resource already existed.
 */
export function foldActivity<E extends Event, S extends { status: string }, Entry>(
  events: readonly RecordedEvent<E>[],
  initial: S,
  evolve: (state: S, event: E) => S,
  step: (
    entries: Entry[],
    event: RecordedEvent<E>,
    now: Present<S>,
    before: Present<S> | undefined,
  ) => void,
): Entry[] {
  let state = initial;
  const entries: Entry[] = [];
  for (const event of events) {
    const before = state.status === 'present' ? (state as Present<S>) : undefined;
    state = evolve(state, event);
    if (state.status === 'present') step(entries, event, state as Present<S>, before);
  }
  return entries;
}

/** Where a resource's activity is in the log and how its streams become entries. */
export type ActivitySource<E extends Event, Entry> = Readonly<{
  /** the stream of one resource */
  stream: (id: number) => string;
  /** the prefix of every stream of the resource, and the event types to read from them */
  streamPrefix: string;
  eventTypes: readonly E['type'][];
  /** the event that starts a stream; its `data.projectId` is the project the stream belongs to */
  createdType: E['type'];
  fold: (events: readonly RecordedEvent<E>[]) => Entry[];
}>;

type ActivityUsers = Pick<AccessReader, 'activityUsers'>;
type PagedEntry = { userId?: number; position: bigint; created_at: string };

const createdIn = (first: RecordedEvent | undefined, type: string, projectId: number) =>
  first?.type === type && (first.data as { projectId?: unknown }).projectId === projectId;

/** The activity readers of a resource: of one (undefined when not in this project), of them all. */
export function activityReaders<E extends Event, Entry extends PagedEntry>(
  source: ActivitySource<E, Entry>,
) {
  return {
    /** Activity of one resource, newest first; undefined when it is not in this project. */
    async one(
      store: EventStore,
      users: ActivityUsers,
      projectId: number,
      id: number,
      page: ActivityWindow,
    ) {
      const events = await store.readStream<E>(source.stream(id));
      if (!createdIn(events[0], source.createdType, projectId)) return undefined;
      return activityPage(users, source.fold(events), page);
    },
    /** Activity of every resource of a project, newest first, from its streams in log order. */
    async all(store: EventStore, users: ActivityUsers, projectId: number, page: ActivityWindow) {
      const byStream = new Map<string, RecordedEvent<E>[]>();
      for await (const e of readAllEvents(store, {
        streamPrefixes: [source.streamPrefix],
        eventTypes: source.eventTypes,
      })) {
        if (e.metadata.projectId !== undefined && e.metadata.projectId !== projectId) continue;
        const list = byStream.get(e.streamName) ?? [];
        list.push(e as RecordedEvent<E>);
        byStream.set(e.streamName, list);
      }
      // A stream belongs to the project of its Created event.
      const own = [...byStream.values()].filter((events) =>
        createdIn(events[0], source.createdType, projectId),
      );
      return activityPage(users, own.flatMap(source.fold), page);
    },
  };
}

type ActivityOf<T extends z.ZodType> = z.infer<T> extends { activity: infer A } ? A : never;

/**
 * The activity of a fields resource (commands/shared/model/fieldsResource.ts) whose events are
 * named after its scope (`ActionCreated` for `Action`): created (every field), updated (the changed
 * fields, before and after), deleted and a restore (`deleted` true → false), which PostHog logs as
 * `updated` for some resources (actions) and as `restored` for others (annotations).
 */
export function fieldsResourceActivity<
  const S extends string,
  F extends object,
  E extends FieldsResourceEvent<S, F>,
  T extends z.ZodType,
>(o: {
  scope: S;
  /** the entry schema (`activityEntrySchema`), for the entries' type */
  entry: T;
  fieldNames: readonly (keyof F & string)[];
  evolve: (state: FieldsResourceState<F>, event: E) => FieldsResourceState<F>;
  itemId: (event: E) => number;
  /** `detail.name` of every entry: the name the resource has after the change */
  name: (fields: F) => string | null;
  /** PostHog logs a restore as `updated` (actions) or `restored` (annotations) */
  restoredAs: NoInfer<ActivityOf<T>> & ('updated' | 'restored');
}): (events: readonly RecordedEvent<E>[]) => RawActivityEntry<T>[] {
  const change = changeMaker(o.scope);
  const type = (suffix: string) => `${o.scope}${suffix}`;
  return (events) =>
    foldActivity(
      events,
      initialFieldsResourceState<F>(),
      o.evolve,
      (entries: RawActivityEntry<T>[], event, now, before) => {
        const id = String(o.itemId(event));
        const entry = (activity: string, changes: ActivityChange<S, string, string>[]) =>
          entries.push({
            ...entryBase(event, o.scope, id),
            activity,
            detail: { id, name: o.name(now.fields), changes },
          } as unknown as RawActivityEntry<T>);
        const data = event.data as { fields?: F; changes?: Partial<F> };
        if (event.type === type('Created'))
          entry(
            'created',
            o.fieldNames.map((f) => change('created', f, null, data.fields?.[f])),
          );
        else if (event.type === type('Updated') && before) {
          const changes: Partial<F> = data.changes ?? {};
          entry(
            'updated',
            o.fieldNames
              .filter((f) => Object.hasOwn(changes, f))
              .map((f) => change('changed', f, before.fields[f], changes[f])),
          );
        } else if (event.type === type('SoftDeleted'))
          entry('deleted', [change('deleted', 'deleted', false, true)]);
        else if (event.type === type('Restored'))
          entry(o.restoredAs, [change('changed', 'deleted', true, false)]);
      },
    );
}
