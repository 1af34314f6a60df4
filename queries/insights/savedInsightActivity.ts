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

const Change = activityChangeSchema('Insight');
type Change = z.infer<typeof Change>;

export const InsightActivityEntry = activityEntrySchema({
  id: 'InsightActivityLogEntry',
  scope: 'Insight',
  activities: ['created', 'updated', 'deleted'],
  change: Change,
  detail: { short_id: z.string() },
});
type Entry = RawActivityEntry<typeof InsightActivityEntry>;
type Present = Extract<InsightState, { status: 'present' }>;

const FIELDS = ['name', 'description', 'filters', 'query', 'saved', 'favorited'] as const;
const change = changeMaker('Insight');
const dashboardIds = (s: Present | undefined) => s?.tiles.map((t) => t.dashboardId) ?? [];

/**
 * One entry per change a user made to an insight, folded from its stream (PostHog's `Insight`
 * activity): created, updated (fields before/after, `dashboards` as ids), deleted, restored
 * (`deleted` true → false). An old log's `InsightRefreshed` (a cached result) is no change: skipped.
 */
export function insightActivityOf(events: readonly RecordedEvent<InsightEvent>[]): Entry[] {
  let lastCorrelation: string | undefined;
  const insightEvents = events.filter((e) => isInsightEvent(e));
  return foldActivity(
    insightEvents,
    initialInsightState(),
    evolveInsight,
    (entries: Entry[], event, now, before) => {
      const item = String(event.data.insightId);
      const entry = (activity: Entry['activity'], changes: Change[]): Entry => ({
        ...entryBase(event, 'Insight', item),
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
        sameRequest
          ? last.detail.changes.push(...changes)
          : entries.push(entry('updated', changes));
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
    },
  );
}

/** Insight activity: of one insight (undefined when not in this project), of a project's insights. */
export const { one: insightActivity, all: allInsightsActivity } = activityReaders({
  stream: insightStream,
  streamPrefix: 'insight-',
  eventTypes: insightEventTypes,
  createdType: 'InsightCreated',
  fold: insightActivityOf,
});
