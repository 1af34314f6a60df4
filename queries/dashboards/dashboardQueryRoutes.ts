import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { dashboardsProjection } from '../../projections/dashboards/dashboardsProjection.ts';
import { dashboardsReader } from '../../projections/dashboards/dashboardsReader.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { ProjectParams } from '../../src/http/params.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { awaitAnalytics } from '../insights/awaitAnalytics.ts';
import { InsightSeriesResponse, insightSeries, TrendQuery } from '../insights/insightSeries.ts';

const Tile = z.object({
  id: z.number().int(),
  insight: z.object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    filters: z.record(z.string(), z.unknown()).describe('PostHog’s insight filter'),
    result: InsightSeriesResponse.shape.result.describe('the series, computed when read'),
  }),
});
const DashboardView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    created_at: z.string(),
    created_by_id: z.number().int().nullable(),
    feature_flag_id: z.number().int().nullable(),
    tiles: z.array(Tile),
  })
  .meta({ id: 'Dashboard' });

/** A tile's stored insight filter as the trend query the insight endpoint takes. */
const trendQueryOf = (filters: Record<string, unknown>) =>
  TrendQuery.parse(
    Object.fromEntries(
      Object.entries(filters)
        .filter(([k]) => k in TrendQuery.shape)
        .map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    ),
  );

/** `GET dashboards/:id/`: the dashboard and its tiles, each with its series computed now. */
export const dashboardQueryRoutes =
  (ctx: AppContext, ch: ClickHouse): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const dashboards = dashboardsReader(ctx.pool);
    app.get(
      '/api/projects/:project_id/dashboards/:id/',
      {
        config: { scope: 'dashboard:read' },
        schema: {
          tags: ['dashboards'],
          params: ProjectParams.extend({
            id: z.coerce.number().int().describe('dashboard id'),
          }),
          response: { 200: DashboardView, ...errorResponses },
        },
      },
      async (request) => {
        const projectId = projectOf(request).id;
        await awaitNewest(ctx, dashboardsProjection.filter, dashboardsProjection);
        const row = (await dashboards.get(projectId, request.params.id)) ?? fail(notFound());
        await awaitAnalytics(ctx);
        const tiles = [];
        for (const tile of row.tiles) {
          const { result } = await insightSeries(ctx, ch, projectId, trendQueryOf(tile.filters));
          tiles.push({
            id: tile.id,
            insight: {
              id: tile.id,
              name: tile.name,
              description: tile.description,
              filters: tile.filters,
              result,
            },
          });
        }
        return {
          id: row.id,
          name: row.name,
          description: row.description,
          created_at: new Date(row.created_at).toISOString(),
          created_by_id: row.created_by_user_id,
          feature_flag_id: row.feature_flag_id,
          tiles,
        };
      },
    );
  };
