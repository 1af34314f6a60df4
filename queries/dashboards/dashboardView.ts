import { z } from 'zod';
import { accessReader, type UserRecord } from '../../projections/access/accessReader.ts';
import { dashboardsProjection } from '../../projections/dashboards/dashboardsProjection.ts';
import {
  type DashboardRow,
  dashboardsReader,
} from '../../projections/dashboards/dashboardsReader.ts';
import { insightsProjection } from '../../projections/insights/insightsProjection.ts';
import { insightsReader } from '../../projections/insights/insightsReader.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { toUserView, UserView } from '../featureFlags/flagView.ts';
import { awaitAnalytics } from '../insights/awaitAnalytics.ts';
import { insightResultCache } from '../insights/insightResultCache.ts';
import { InsightSeriesResponse, insightSeries, TrendQuery } from '../insights/insightSeries.ts';
import { creatorIds, SavedInsightView, toSavedInsightView } from '../insights/savedInsightView.ts';

/** A flag usage dashboard's generated tile: its filters, computed when read. */
const UsageInsight = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  filters: z.record(z.string(), z.unknown()).describe('PostHog’s insight filter'),
  result: InsightSeriesResponse.shape.result.describe('the series, computed when read'),
});
const Tile = z.object({
  id: z.number().int(),
  insight: z.union([SavedInsightView, UsageInsight]),
  order: z.number().int(),
  last_refresh: z.string().nullable(),
  is_cached: z.boolean(),
  color: z.null(),
  layouts: z.record(z.string(), z.unknown()),
  text: z.null(),
});

/** PostHog's dashboard without tiles (DashboardBasicSerializer): what the list answers. */
export const DashboardBasicView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    pinned: z.boolean(),
    created_at: z.string(),
    created_by: UserView.nullable(),
    created_by_id: z.number().int().nullable(),
    deleted: z.boolean(),
    creation_mode: z.enum(['default', 'template']).describe('template: a flag’s usage dashboard'),
    tags: z.array(z.string()),
    restriction_level: z.number().int(),
    effective_restriction_level: z.number().int(),
    effective_privilege_level: z.number().int(),
    last_refresh: z.null(),
    team_id: z.number().int(),
    feature_flag_id: z.number().int().nullable(),
  })
  .meta({ id: 'DashboardBasic' });
export const DashboardView = DashboardBasicView.extend({
  filters: z.record(z.string(), z.unknown()),
  tiles: z.array(Tile),
}).meta({ id: 'Dashboard' });

export const toDashboardBasicView = (
  row: DashboardRow,
  users: ReadonlyMap<number, UserRecord>,
): z.infer<typeof DashboardBasicView> => {
  const creator = row.created_by_user_id === null ? undefined : users.get(row.created_by_user_id);
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    pinned: row.pinned,
    created_at: new Date(row.created_at).toISOString(),
    created_by: creator ? toUserView(creator) : null,
    created_by_id: row.created_by_user_id,
    deleted: row.deleted,
    creation_mode: row.feature_flag_id === null ? 'default' : 'template',
    tags: [],
    restriction_level: 21,
    effective_restriction_level: 21,
    effective_privilege_level: 37,
    last_refresh: null,
    team_id: row.project_id,
    feature_flag_id: row.feature_flag_id,
  };
};

/** A usage tile's stored insight filter as the trend query the insight endpoint takes. */
const trendQueryOf = (filters: Record<string, unknown>) =>
  TrendQuery.parse(
    Object.fromEntries(
      Object.entries(filters)
        .filter(([k]) => k in TrendQuery.shape)
        .map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    ),
  );

/**
 * The dashboard with its tiles: a usage dashboard's generated tiles with their series computed now
 * (when ClickHouse is given), then the saved insights on it with their cached results.
 */
export async function dashboardView(
  ctx: AppContext,
  ch: ClickHouse | undefined,
  projectId: number,
  id: number,
  includeDeleted = false,
): Promise<z.infer<typeof DashboardView>> {
  // each read model waits for the newest event it folds (the other's events never reach it)
  await Promise.all([
    awaitNewest(ctx, dashboardsProjection.filter, dashboardsProjection),
    awaitNewest(ctx, insightsProjection.filter, insightsProjection),
  ]);
  const row =
    (await dashboardsReader(ctx.pool).get(projectId, id, includeDeleted)) ?? fail(notFound());
  const insights = row.deleted ? [] : await insightsReader(ctx.pool).onDashboard(projectId, id);
  const users = await accessReader(ctx.pool).usersById(creatorIds([row, ...insights]));
  const tiles: z.infer<typeof Tile>[] = [];
  const layout = { color: null, layouts: {}, text: null };
  if (ch && row.tiles.length > 0) await awaitAnalytics(ctx);
  for (const tile of row.tiles) {
    const result = ch
      ? (await insightSeries(ctx, ch, projectId, trendQueryOf(tile.filters))).result
      : [];
    const insight = {
      id: tile.id,
      name: tile.name,
      description: tile.description,
      filters: tile.filters,
      result,
    };
    tiles.push({
      id: tile.id,
      insight,
      order: tiles.length,
      last_refresh: null,
      is_cached: false,
      ...layout,
    });
  }
  const cached = await insightResultCache(ctx.pool).get(projectId, insights);
  for (const insight of insights) {
    const view = toSavedInsightView(insight, users, cached.get(insight.id));
    const tileId = insight.tiles.find((t) => t.dashboard_id === id)?.id ?? insight.id;
    tiles.push({
      id: tileId,
      insight: view,
      order: tiles.length,
      last_refresh: view.last_refresh,
      is_cached: view.is_cached,
      ...layout,
    });
  }
  return { ...toDashboardBasicView(row, users), filters: row.filters, tiles };
}
