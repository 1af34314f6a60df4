import { z } from 'zod';
import {
  evolveInsight,
  type InsightEvent,
  type InsightState,
  initialInsightState,
  insightEventTypes,
  insightStream,
  isInsightEvent,
} from '../../commands/insights/model/insight.ts';
import type { AccessReader } from '../../projections/access/accessReader.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { readAllEvents } from '../../src/eventStore/readAllEvents.ts';
import { type ActivityWindow, activityPage } from '../shared/activityPage.ts';

const Change = z.object({
  type: z.literal('Insight'),
  action: z.enum(['created', 'changed', 'deleted']),
  field: z.string(),
  before: z.unknown(),
  after: z.unknown(),
});
type Change = z.infer<typeof Change>;

export const InsightActivityEntry = z
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
    scope: z.literal('Insight'),
    item_id: z.string(),
    detail: z.object({
      id: z.string(),
      name: z.string().nullable(),
      short_id: z.string(),
      changes: z.array(Change),
    }),
    created_at: z.string(),
  })
  .meta({ id: 'InsightActivityLogEntry' });
type Entry = Omit<z.infer<typeof InsightActivityEntry>, 'user'> & {
  userId?: number;
  position: bigint;
};
type Present = Extract<InsightState, { status: 'present' }>;

const FIELDS = ['name', 'description', 'filters', 'query', 'saved', 'favorited'] as const;
const change = (action: Change['action'], field: string, before: unknown, after: unknown) =>
  ({ type: 'Insight', action, field, before, after }) as Change;
const dashboardIds = (s: Present | undefined) => s?.tiles.map((t) => t.dashboardId) ?? [];

/**
 * One entry per change a user made to an insight, folded from its stream (PostHog's `Insight`
 * activity): created, updated (fields before/after, `dashboards` as ids), deleted, restored
 * (`deleted` true → false). An old log's `InsightRefreshed` (a cached result) is no change: skipped.
 */
export function insightActivityOf(events: readonly RecordedEvent<InsightEvent>[]): Entry[] {
  let state = initialInsightState();
  const entries: Entry[] = [];
  let lastCorrelation: string | undefined;
  for (const event of events) {
    if (!isInsightEvent(event)) continue;
    const before = state.status === 'present' ? (state as Present) : undefined;
    state = evolveInsight(state, event);
    if (state.status !== 'present') continue;
    const now = state as Present;
    const item = String(event.data.insightId);
    const entry = (activity: Entry['activity'], changes: Change[]): Entry => ({
      id: event.id,
      scope: 'Insight',
      item_id: item,
      created_at: event.metadata.occurredAt,
      position: event.position,
      ...(event.metadata.userId !== undefined ? { userId: event.metadata.userId } : {}),
      activity,
      detail: { id: item, name: now.fields.name, short_id: now.shortId, changes },
    });
    // one request's events (a patch that edits and moves the insight) make one entry
    const last = entries.at(-1);
    const sameRequest =
      last !== undefined &&
      last.activity === 'updated' &&
      event.metadata.correlationId !== undefined &&
      lastCorrelation === event.metadata.correlationId;
    lastCorrelation = event.metadata.correlationId;
    const push = (changes: Change[]) =>
      sameRequest ? last.detail.changes.push(...changes) : entries.push(entry('updated', changes));
    if (event.type === 'InsightCreated')
      entries.push(
        entry('created', [
          ...FIELDS.map((f) => change('created', f, null, event.data.fields[f])),
          change('created', 'dashboards', null, dashboardIds(now)),
        ]),
      );
    else if (event.type === 'InsightUpdated')
      push(
        FIELDS.filter((f) => f in event.data.changes).map((f) =>
          change('changed', f, before?.fields[f] ?? null, event.data.changes[f]),
        ),
      );
    else if (event.type === 'InsightDashboardsSet')
      push([change('changed', 'dashboards', dashboardIds(before), dashboardIds(now))]);
    else if (event.type === 'InsightRestored') push([change('changed', 'deleted', true, false)]);
    else if (event.type === 'InsightSoftDeleted')
      entries.push(entry('deleted', [change('deleted', 'deleted', false, true)]));
  }
  return entries;
}

/** Activity of one insight, newest first; undefined when it is not in this project. */
export async function insightActivity(
  store: EventStore,
  users: Pick<AccessReader, 'activityUsers'>,
  projectId: number,
  insightId: number,
  page: ActivityWindow,
) {
  const events = await store.readStream<InsightEvent>(insightStream(insightId));
  const created = events[0];
  if (created?.type !== 'InsightCreated' || created.data.projectId !== projectId) return undefined;
  return activityPage(users, insightActivityOf(events), page);
}

/** Activity of every insight of a project, newest first, from the insight streams in log order. */
export async function allInsightsActivity(
  store: EventStore,
  users: Pick<AccessReader, 'activityUsers'>,
  projectId: number,
  page: ActivityWindow,
) {
  const byStream = new Map<string, RecordedEvent<InsightEvent>[]>();
  for await (const e of readAllEvents(store, {
    streamPrefixes: ['insight-'],
    eventTypes: insightEventTypes,
  })) {
    if (e.metadata.projectId !== undefined && e.metadata.projectId !== projectId) continue;
    const list = byStream.get(e.streamName) ?? [];
    list.push(e as RecordedEvent<InsightEvent>);
    byStream.set(e.streamName, list);
  }
  const own = [...byStream.values()].filter(
    (events) => events[0]?.type === 'InsightCreated' && events[0].data.projectId === projectId,
  );
  return activityPage(users, own.flatMap(insightActivityOf), page);
}
