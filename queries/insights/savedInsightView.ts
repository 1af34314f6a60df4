import { z } from 'zod';
import type { UserRecord } from '../../projections/access/accessReader.ts';
import type { InsightRow } from '../../projections/insights/insightsReader.ts';
import { toUserView, UserView } from '../featureFlags/flagView.ts';
import type { CachedInsightResult } from './insightResultCache.ts';

/**
 * PostHog's saved insight (posthog/api/insight.py, InsightSerializer). An insight saved as a query
 * answers `filters: {}` and its `query`, as PostHog does once insights are query based; one saved
 * with filters answers them and `query: null`. `result` is the cached one of its current filters
 * (queries/insights/insightResultCache.ts), null before a refresh and after an edit.
 */
export const SavedInsightView = z
  .object({
    id: z.number().int(),
    short_id: z.string(),
    name: z.string().nullable(),
    derived_name: z.string().nullable(),
    filters: z.record(z.string(), z.unknown()),
    query: z.record(z.string(), z.unknown()).nullable(),
    order: z.number().int().nullable(),
    deleted: z.boolean(),
    dashboards: z.array(z.number().int()).describe('the dashboards it is on (deprecated: tiles)'),
    dashboard_tiles: z.array(
      z.object({ id: z.number().int(), dashboard_id: z.number().int(), deleted: z.boolean() }),
    ),
    last_refresh: z.string().nullable().describe('when `result` was computed (refresh=true)'),
    cache_target_age: z.null(),
    next_allowed_client_refresh: z
      .string()
      .nullable()
      .describe('last_refresh + 15 minutes: refresh=blocking answers the cached result until then'),
    result: z
      .unknown()
      .describe(
        'the cached result, as the legacy endpoint of its kind answers `result` (insights/trend/, funnel/, retention/, path/), or null',
      ),
    hasMore: z.boolean(),
    columns: z.null(),
    created_at: z.string(),
    created_by: UserView.nullable(),
    description: z.string(),
    updated_at: z.string(),
    tags: z.array(z.string()),
    favorited: z.boolean(),
    saved: z.boolean(),
    last_modified_at: z.string(),
    last_modified_by: UserView.nullable().describe('not tracked here: null'),
    is_sample: z.boolean(),
    effective_restriction_level: z.number().int(),
    effective_privilege_level: z.number().int(),
    timezone: z.literal('UTC'),
    is_cached: z.boolean(),
    query_status: z.null(),
    hogql: z.null(),
    types: z.null(),
  })
  .meta({ id: 'SavedInsight' });
export type SavedInsightView = z.infer<typeof SavedInsightView>;

/** Everyone in the project can edit (PostHog's 21 and 37, as for dashboards without restriction). */
const EVERYONE_CAN_EDIT = 21;
const CAN_EDIT = 37;

/** PostHog's base minimum time between two computations of an insight a client asks for. */
export const MIN_REFRESH_INTERVAL_MS = 15 * 60_000;
export const nextAllowedRefresh = (cached: CachedInsightResult) =>
  new Date(cached.lastRefresh.getTime() + MIN_REFRESH_INTERVAL_MS);

export function toSavedInsightView(
  row: InsightRow,
  users: ReadonlyMap<number, UserRecord>,
  cached?: CachedInsightResult | undefined,
): SavedInsightView {
  const creator = row.created_by_user_id === null ? undefined : users.get(row.created_by_user_id);
  const user = creator ? toUserView(creator) : null;
  const updated = new Date(row.updated_at).toISOString();
  return {
    id: row.id,
    short_id: row.short_id,
    name: row.name,
    derived_name: null,
    filters: row.query ? {} : row.filters,
    query: row.query,
    order: null,
    deleted: row.deleted,
    dashboards: row.tiles.map((t) => t.dashboard_id),
    dashboard_tiles: row.tiles.map((t) => ({ ...t, deleted: false })),
    last_refresh: cached ? cached.lastRefresh.toISOString() : null,
    cache_target_age: null,
    next_allowed_client_refresh: cached ? nextAllowedRefresh(cached).toISOString() : null,
    result: cached ? cached.result : null,
    hasMore: false,
    columns: null,
    created_at: new Date(row.created_at).toISOString(),
    created_by: user,
    description: row.description,
    updated_at: updated,
    tags: [],
    favorited: row.favorited,
    saved: row.saved,
    last_modified_at: updated,
    last_modified_by: null,
    is_sample: false,
    effective_restriction_level: EVERYONE_CAN_EDIT,
    effective_privilege_level: CAN_EDIT,
    timezone: 'UTC',
    is_cached: cached !== undefined,
    query_status: null,
    hogql: null,
    types: null,
  };
}

/** The creators of these rows, read once for a page. */
export const creatorIds = (rows: readonly { created_by_user_id: number | null }[]) => [
  ...new Set(rows.map((r) => r.created_by_user_id).filter((id): id is number => id !== null)),
];
