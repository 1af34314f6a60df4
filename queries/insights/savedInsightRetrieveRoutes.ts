import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { accessReader } from '../../projections/access/accessReader.ts';
import { insightsProjection } from '../../projections/insights/insightsProjection.ts';
import { insightsReader } from '../../projections/insights/insightsReader.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { fail, invalidInput, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { ProjectParams } from '../../src/http/params.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { createInsightResultCache, insightResultCache } from './insightResultCache.ts';
import { computeInsightResult, RefreshParam, refreshMode } from './savedInsightResult.ts';
import {
  creatorIds,
  nextAllowedRefresh,
  SavedInsightView,
  toSavedInsightView,
} from './savedInsightView.ts';

/**
 * One saved insight (issue #28), a read: with `refresh` its result is computed by the engine of
 * its kind and kept in the read side's cache (insightResultCache.ts), never in the log.
 */
export const savedInsightRetrieveRoutes =
  (ctx: AppContext, ch: ClickHouse | undefined): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    await createInsightResultCache(ctx.pool);
    const insights = insightsReader(ctx.pool);
    const cache = insightResultCache(ctx.pool);
    const users = accessReader(ctx.pool);

    app.get(
      '/api/projects/:project_id/insights/:id/',
      {
        config: { scope: 'insight:read' },
        schema: {
          tags: ['insights'],
          params: ProjectParams.extend({ id: z.coerce.number().int().describe('insight id') }),
          querystring: z.object({ refresh: RefreshParam }),
          response: { 200: SavedInsightView, ...errorResponses },
        },
      },
      async (request) => {
        const projectId = projectOf(request).id;
        await awaitNewest(ctx, insightsProjection.filter, insightsProjection);
        const row = (await insights.get(projectId, request.params.id)) ?? fail(notFound());
        const creators = await users.usersById(creatorIds([row]));
        const cached = (await cache.get(projectId, [row])).get(row.id);
        const mode = refreshMode(request.query.refresh);
        const fresh = cached !== undefined && ctx.now() < nextAllowedRefresh(cached);
        if (mode === 'never' || (mode === 'when_stale' && fresh))
          return toSavedInsightView(row, creators, cached);
        if (!ch)
          fail(
            invalidInput('refresh needs ClickHouse, which this server runs without.', 'refresh'),
          );
        const result = await computeInsightResult(ctx, ch, projectId, row.filters);
        const computed = { result, lastRefresh: ctx.now() };
        // kept for these filters (an edit meanwhile changes the hash, so it is never answered);
        // a result over the byte cap is answered but not kept
        await cache.put(projectId, row.id, row.filters, result, computed.lastRefresh);
        return { ...toSavedInsightView(row, creators, computed), is_cached: false };
      },
    );
  };
