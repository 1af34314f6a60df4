import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { accessReader } from '../../projections/access/accessReader.ts';
import { insightsProjection } from '../../projections/insights/insightsProjection.ts';
import { insightsReader } from '../../projections/insights/insightsReader.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { PageQuery, pageAnswer, paginated } from '../../src/http/pagination.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { activityPageSchema, activityRoutes } from '../shared/activityRoutes.ts';
import { insightResultCache } from './insightResultCache.ts';
import {
  allInsightsActivity,
  InsightActivityEntry,
  insightActivity,
} from './savedInsightActivity.ts';
import { creatorIds, SavedInsightView, toSavedInsightView } from './savedInsightView.ts';

const Bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const ListQuery = PageQuery.extend({
  short_id: z.string().max(64).optional().describe('the insight with this short id'),
  saved: Bool.optional().describe('true: saved or on a dashboard; false: not saved'),
  favorited: Bool.optional().describe('true: favorited only'),
  created_by: z.coerce.number().int().optional().describe('created by this user id'),
  search: z.string().max(400).optional().describe('in the name or description (case-insensitive)'),
  insight: z.string().max(40).optional().describe('legacy insight type, e.g. TRENDS'),
  basic: z.string().max(10).optional().describe('accepted; the full shape is answered'),
  refresh: z.string().max(20).optional().describe('ignored on the list: cached results only'),
});

// Built with the module, as before the activity routes were shared: the OpenAPI document lists
// components in the order their schemas are made.
const ActivityPage = activityPageSchema(InsightActivityEntry, 'InsightActivityPage');

/**
 * Read side of saved insights: the list (newest first, deleted hidden, cached results; the table
 * is made by savedInsightRetrieveRoutes, registered beside) and activity.
 */
export const savedInsightQueryRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const insights = insightsReader(ctx.pool);
    const users = accessReader(ctx.pool);
    const cache = insightResultCache(ctx.pool);

    app.get(
      '/api/projects/:project_id/insights/',
      {
        config: { scope: 'insight:read' },
        schema: {
          tags: ['insights'],
          params: ProjectParams,
          querystring: ListQuery,
          response: { 200: paginated(SavedInsightView), ...errorResponses },
        },
      },
      async (request) => {
        const q = request.query;
        await awaitNewest(ctx, insightsProjection.filter, insightsProjection);
        const page = await insights.list(
          projectOf(request).id,
          {
            shortId: q.short_id,
            saved: q.saved,
            favorited: q.favorited,
            createdBy: q.created_by,
            search: q.search,
            insight: q.insight,
          },
          q,
        );
        const creators = await users.usersById(creatorIds(page.rows));
        const cached = await cache.get(projectOf(request).id, page.rows);
        return pageAnswer(request, q, {
          count: page.count,
          results: page.rows.map((row) => toSavedInsightView(row, creators, cached.get(row.id))),
        });
      },
    );

    activityRoutes(app, {
      path: '/api/projects/:project_id/insights',
      tags: ['insights'],
      params: ProjectParams.extend({ id: z.coerce.number().int().describe('insight id') }),
      page: ActivityPage,
      store: ctx.store,
      users,
      readers: { one: insightActivity, all: allInsightsActivity },
    });
  };
