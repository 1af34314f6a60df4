import { match } from 'ts-pattern';
import type { Event } from '../../../src/core/event.ts';

/**
 * A flag's usage dashboard (issue #10): tiles whose insight filters are PostHog's legacy insight
 * filter (computed when the dashboard is read). One per flag: its events live on the stream
 * `usage_dashboard-<project>-<flag>`, so creating it twice finds the first.
 */
export type DashboardTile = {
  id: number;
  name: string;
  description: string;
  /** PostHog's insight filter: `insight`, `events`, `properties`, `breakdown`, `date_from`, … */
  filters: Record<string, unknown>;
};

export type UsageDashboardCreated = Event<
  'UsageDashboardCreated',
  {
    dashboardId: number;
    projectId: number;
    flagId: number;
    name: string;
    description: string;
    tiles: DashboardTile[];
    createdAt: string;
    createdByUserId: number | null;
  }
>;
export type UsageDashboardEnriched = Event<
  'UsageDashboardEnriched',
  { dashboardId: number; projectId: number; flagId: number; tiles: DashboardTile[] }
>;
export type DashboardEvent = UsageDashboardCreated | UsageDashboardEnriched;
export const dashboardEventTypes: readonly DashboardEvent['type'][] = [
  'UsageDashboardCreated',
  'UsageDashboardEnriched',
];

export const usageDashboardStream = (projectId: number, flagId: number) =>
  `usage_dashboard-${projectId}-${flagId}`;

export type UsageDashboardState =
  | { status: 'absent' }
  | { status: 'present'; dashboardId: number; enriched: boolean; tiles: number };

export const initialUsageDashboardState = (): UsageDashboardState => ({ status: 'absent' });

export function evolveUsageDashboard(
  state: UsageDashboardState,
  event: DashboardEvent,
): UsageDashboardState {
  return match(event)
    .with({ type: 'UsageDashboardCreated' }, (e) => ({
      status: 'present' as const,
      dashboardId: e.data.dashboardId,
      enriched: false,
      tiles: e.data.tiles.length,
    }))
    .with({ type: 'UsageDashboardEnriched' }, (e) =>
      state.status === 'present'
        ? { ...state, enriched: true, tiles: state.tiles + e.data.tiles.length }
        : state,
    )
    .exhaustive();
}

const flagCalled = (key: string) => [
  { key: '$feature_flag', type: 'event', value: key, operator: 'exact' },
];

/** PostHog's feature flag dashboard template: flag calls, and unique users, per response. */
export function usageTiles(dashboardId: number, flagKey: string): DashboardTile[] {
  const base = {
    insight: 'TRENDS',
    interval: 'day',
    date_from: '-30d',
    properties: flagCalled(flagKey),
    breakdown: '$feature_flag_response',
    breakdown_type: 'event',
  };
  return [
    {
      id: dashboardId * 100 + 1,
      name: 'Feature Flag Called Total Volume',
      description: `Shows the number of total calls made on feature flag with key: ${flagKey}`,
      filters: {
        ...base,
        events: [{ id: '$feature_flag_called', type: 'events', math: 'total' }],
        display: 'ActionsLineGraph',
      },
    },
    {
      id: dashboardId * 100 + 2,
      name: 'Feature Flag calls made by unique users per variant',
      description:
        'Shows the number of unique user calls made on feature flag per variant with key: ' +
        flagKey,
      filters: {
        ...base,
        events: [{ id: '$feature_flag_called', type: 'events', math: 'dau' }],
        display: 'ActionsTable',
      },
    },
  ];
}

/** The enriched tiles: every event carrying `$feature/<key>`, and their unique users, by variant. */
export function enrichedTiles(dashboardId: number, flagKey: string): DashboardTile[] {
  const property = `$feature/${flagKey}`;
  const base = {
    insight: 'TRENDS',
    interval: 'day',
    date_from: '-30d',
    properties: [{ key: property, type: 'event', operator: 'is_set' }],
    breakdown: property,
    breakdown_type: 'event',
  };
  return [
    {
      id: dashboardId * 100 + 3,
      name: 'Events by variant',
      description: `Events carrying ${property}, by its value`,
      filters: {
        ...base,
        events: [{ id: null, type: 'events', math: 'total' }],
        display: 'ActionsLineGraph',
      },
    },
    {
      id: dashboardId * 100 + 4,
      name: 'Unique users by variant',
      description: `Unique users of events carrying ${property}, by its value`,
      filters: {
        ...base,
        events: [{ id: null, type: 'events', math: 'dau' }],
        display: 'ActionsLineGraph',
      },
    },
  ];
}
