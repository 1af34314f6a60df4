import { match } from 'ts-pattern';
import type { Event } from '../../../src/core/event.ts';

/**
 * A saved insight (issue #28): PostHog's legacy insight `filters` (what `insights/trend/` takes)
 * and, when it was saved as a query, the `query` as sent. It sits on dashboards through tiles.
 * Computed results are not events: they are the read side's cache (queries/insights/).
 */
export type InsightFields = {
  name: string | null;
  description: string;
  /** the legacy filter the insight engine computes (for a query: the filter it maps onto) */
  filters: Record<string, unknown>;
  /** `{"kind": "InsightVizNode", …}` as sent, or null for an insight saved with filters */
  query: Record<string, unknown> | null;
  saved: boolean;
  favorited: boolean;
};
/** The insight on a dashboard: the tile's own id and the dashboard's. */
export type InsightTile = { tileId: number; dashboardId: number };

export type InsightCreated = Event<
  'InsightCreated',
  {
    insightId: number;
    projectId: number;
    shortId: string;
    fields: InsightFields;
    tiles: InsightTile[];
    createdAt: string;
    createdByUserId: number | null;
  }
>;
/** carries only the fields whose value changed */
export type InsightUpdated = Event<
  'InsightUpdated',
  { insightId: number; changes: Partial<InsightFields>; at: string }
>;
/** the dashboards it is on now (every tile, kept ones with their id) */
export type InsightDashboardsSet = Event<
  'InsightDashboardsSet',
  { insightId: number; tiles: InsightTile[] }
>;
export type InsightSoftDeleted = Event<'InsightSoftDeleted', { insightId: number }>;
export type InsightRestored = Event<'InsightRestored', { insightId: number }>;
export type InsightEvent =
  | InsightCreated
  | InsightUpdated
  | InsightDashboardsSet
  | InsightSoftDeleted
  | InsightRestored;

/** Every insight event: each is a user's change (activity). */
export const insightEventTypes = [
  'InsightCreated',
  'InsightUpdated',
  'InsightDashboardsSet',
  'InsightSoftDeleted',
  'InsightRestored',
] as const satisfies readonly InsightEvent['type'][];
/**
 * A log written before results moved to the read side's cache holds `InsightRefreshed` events
 * (a computed result) in insight streams. They are derived data, not a change: every fold skips
 * them (and any other type it does not know), so such a log still loads.
 */
export const isInsightEvent = (event: { type: string }): event is InsightEvent =>
  (insightEventTypes as readonly string[]).includes(event.type);
export const insightStream = (insightId: number) => `insight-${insightId}`;

export type InsightState =
  | { status: 'absent' }
  | {
      status: 'present';
      projectId: number;
      shortId: string;
      fields: InsightFields;
      tiles: InsightTile[];
      deleted: boolean;
    };

export const initialInsightState = (): InsightState => ({ status: 'absent' });

export function evolveInsight(state: InsightState, event: InsightEvent): InsightState {
  if (!isInsightEvent(event)) return state; // a retired InsightRefreshed of an old log
  if (state.status === 'absent')
    return event.type === 'InsightCreated'
      ? {
          status: 'present',
          projectId: event.data.projectId,
          shortId: event.data.shortId,
          fields: event.data.fields,
          tiles: event.data.tiles,
          deleted: false,
        }
      : state;
  return match(event)
    .with({ type: 'InsightCreated' }, () => state)
    .with({ type: 'InsightUpdated' }, (e) => ({
      ...state,
      fields: { ...state.fields, ...e.data.changes },
    }))
    .with({ type: 'InsightDashboardsSet' }, (e) => ({ ...state, tiles: e.data.tiles }))
    .with({ type: 'InsightSoftDeleted' }, () => ({ ...state, deleted: true }))
    .with({ type: 'InsightRestored' }, () => ({ ...state, deleted: false }))
    .exhaustive();
}
