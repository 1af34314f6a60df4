import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { accessReader } from '../../projections/access/accessReader.ts';
import { dashboardsProjection } from '../../projections/dashboards/dashboardsProjection.ts';
import { dashboardsReader } from '../../projections/dashboards/dashboardsReader.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { PageQuery, pageAnswer, paginated } from '../../src/http/pagination.ts';
import { ProjectParams } from '../../src/http/params.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { creatorIds } from '../insights/savedInsightView.ts';
import {
  DashboardBasicView,
  DashboardView,
  dashboardView,
  toDashboardBasicView,
} from './dashboardView.ts';

export const DashboardParams = ProjectParams.extend({
  id: z.coerce.number().int().describe('dashboard id'),
});

/**
 * `GET dashboards/`: the project's dashboards (pinned first, then oldest first);
 * `GET dashboards/:id/`: one with its tiles (see dashboardView).
 */
export const dashboardQueryRoutes =
  (ctx: AppContext, ch: ClickHouse): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const dashboards = dashboardsReader(ctx.pool);
    const users = accessReader(ctx.pool);
    const read = { scope: 'dashboard:read' };

    app.get(
      '/api/projects/:project_id/dashboards/',
      {
        config: read,
        schema: {
          tags: ['dashboards'],
          params: ProjectParams,
          querystring: PageQuery,
          response: { 200: paginated(DashboardBasicView), ...errorResponses },
        },
      },
      async (request) => {
        await awaitNewest(ctx, dashboardsProjection.filter, dashboardsProjection);
        const page = await dashboards.list(projectOf(request).id, request.query);
        const creators = await users.usersById(creatorIds(page.rows));
        return pageAnswer(request, request.query, {
          count: page.count,
          results: page.rows.map((row) => toDashboardBasicView(row, creators)),
        });
      },
    );

    app.get(
      '/api/projects/:project_id/dashboards/:id/',
      {
        config: read,
        schema: {
          tags: ['dashboards'],
          params: DashboardParams,
          response: { 200: DashboardView, ...errorResponses },
        },
      },
      async (request) => dashboardView(ctx, ch, projectOf(request).id, request.params.id),
    );
  };
