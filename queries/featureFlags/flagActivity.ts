import { z } from 'zod';
import {
  evolveFlag,
  FEATURE_FLAG_CATEGORY,
  type FeatureFlagEvent,
  type FeatureFlagState,
  featureFlagEventTypes,
  featureFlagStream,
  flagFieldNames,
  initialFlagState,
} from '../../commands/featureFlags/model/featureFlag.ts';
import type { AccessReader } from '../../projections/access/accessReader.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { readAllEvents } from '../../src/eventStore/readAllEvents.ts';
import { type ActivityWindow, activityPage } from '../shared/activityPage.ts';

export const ActivityChange = z.object({
  type: z.literal('FeatureFlag'),
  action: z.enum(['created', 'changed', 'deleted']),
  field: z.string(),
  before: z.unknown(),
  after: z.unknown(),
});

export const ActivityEntry = z
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
    activity: z.enum([
      'created',
      'updated',
      'deleted',
      'restored',
      'role_access_added',
      'role_access_removed',
    ]),
    scope: z.literal('FeatureFlag'),
    item_id: z.string(),
    detail: z.object({
      id: z.string(),
      name: z.string().nullable(),
      changes: z.array(ActivityChange),
    }),
    created_at: z.string(),
  })
  .meta({ id: 'ActivityLogEntry' });
export type ActivityEntry = z.infer<typeof ActivityEntry>;
type Change = z.infer<typeof ActivityChange>;
type Present = Extract<FeatureFlagState, { status: 'present' }>;

const change = (
  action: Change['action'],
  field: string,
  before: unknown,
  after: unknown,
): Change => ({
  type: 'FeatureFlag',
  action,
  field,
  before,
  after,
});

/** One entry per event of a flag stream, with field-level before/after folded from the stream itself. */
type RawEntry = Omit<ActivityEntry, 'user'> & { userId?: number; position: bigint };

export function activityOf(events: readonly RecordedEvent<FeatureFlagEvent>[]): RawEntry[] {
  let state = initialFlagState();
  const entries: RawEntry[] = [];
  for (const event of events) {
    const before = state;
    state = evolveFlag(state, event);
    if (state.status !== 'present') continue;
    const prev = before.status === 'present' ? (before as Present) : undefined;
    const base = {
      id: event.id,
      scope: 'FeatureFlag' as const,
      item_id: String(state.flagId),
      created_at: event.metadata.occurredAt,
      position: event.position,
      ...(event.metadata.userId !== undefined ? { userId: event.metadata.userId } : {}),
    };
    const now = state as Present;
    const detail = (changes: Change[]) => ({
      id: String(now.flagId),
      name: now.fields.key,
      changes,
    });
    const entry = ((): RawEntry | undefined => {
      switch (event.type) {
        case 'FeatureFlagCreated':
          return {
            ...base,
            activity: 'created',
            detail: detail(
              flagFieldNames.map((f) => change('created', f, null, event.data.fields[f])),
            ),
          };
        case 'FeatureFlagPatched':
          return {
            ...base,
            activity: 'updated',
            detail: detail(
              flagFieldNames
                .filter((f) => f in event.data.changes)
                .map((f) => change('changed', f, prev?.fields[f] ?? null, event.data.changes[f])),
            ),
          };
        case 'FeatureFlagSoftDeleted':
          return {
            ...base,
            activity: 'deleted',
            detail: detail([change('deleted', 'deleted', false, true)]),
          };
        case 'FeatureFlagRestored':
          return {
            ...base,
            activity: 'restored',
            detail: detail([change('changed', 'deleted', true, false)]),
          };
        case 'RoleAccessGranted':
          return {
            ...base,
            activity: 'role_access_added',
            detail: detail([
              change('changed', 'role_access', null, {
                id: event.data.roleAccessId,
                role_id: event.data.roleId,
              }),
            ]),
          };
        case 'RoleAccessRevoked':
          return {
            ...base,
            activity: 'role_access_removed',
            detail: detail([
              change(
                'changed',
                'role_access',
                { id: event.data.roleAccessId, role_id: event.data.roleId },
                null,
              ),
            ]),
          };
      }
    })();
    if (entry) entries.push(entry);
  }
  return entries;
}

/** Activity of one flag, newest first; undefined when the flag is not in this project. */
export async function flagActivity(
  store: EventStore,
  users: Pick<AccessReader, 'activityUsers'>,
  projectId: number,
  flagId: number,
  page: ActivityWindow,
) {
  const events = await store.readStream<FeatureFlagEvent>(featureFlagStream(flagId));
  const created = events[0];
  if (created?.type !== 'FeatureFlagCreated' || created.data.projectId !== projectId)
    return undefined;
  return activityPage(users, activityOf(events), page);
}

/** Activity of every flag of a project, newest first, read from the flag streams in log order. */
export async function allFlagsActivity(
  store: EventStore,
  users: Pick<AccessReader, 'activityUsers'>,
  projectId: number,
  page: ActivityWindow,
) {
  const byStream = new Map<string, RecordedEvent<FeatureFlagEvent>[]>();
  for await (const e of readAllEvents(store, {
    streamPrefixes: [`${FEATURE_FLAG_CATEGORY}-`],
    eventTypes: featureFlagEventTypes,
  })) {
    if (e.metadata.projectId !== projectId) continue;
    const list = byStream.get(e.streamName) ?? [];
    list.push(e as RecordedEvent<FeatureFlagEvent>);
    byStream.set(e.streamName, list);
  }
  return activityPage(users, [...byStream.values()].flatMap(activityOf), page);
}
