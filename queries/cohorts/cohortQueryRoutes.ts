import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { accessReader } from '../../projections/access/accessReader.ts';
import { cohortsProjection } from '../../projections/cohorts/cohortsProjection.ts';
import { cohortsReader } from '../../projections/cohorts/cohortsReader.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { PageQuery, pageAnswer, paginated } from '../../src/http/pagination.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { activityPageSchema, activityRoutes } from '../shared/activityRoutes.ts';
import { allCohortsActivity, CohortActivityEntry, cohortActivity } from './cohortActivity.ts';
import { CohortView, toCohortView } from './cohortView.ts';

export const CohortParams = ProjectParams.extend({
  id: z.coerce.number().int().describe('cohort id'),
});

/** Read side of cohorts: the list (newest first, deleted hidden) and one cohort. */
export const cohortQueryRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const cohorts = cohortsReader(ctx.pool);
    const caughtUp = () => awaitNewest(ctx, cohortsProjection.filter, cohortsProjection);
    const read = { scope: 'cohort:read' };

    app.get(
      '/api/projects/:project_id/cohorts/',
      {
        config: read,
        schema: {
          tags: ['cohorts'],
          params: ProjectParams,
          querystring: PageQuery,
          response: { 200: paginated(CohortView), ...errorResponses },
        },
      },
      async (request) => {
        await caughtUp();
        const page = await cohorts.list(projectOf(request).id, request.query);
        return pageAnswer(request, request.query, {
          count: page.count,
          results: page.rows.map(toCohortView),
        });
      },
    );

    app.get(
      '/api/projects/:project_id/cohorts/:id/',
      {
        config: read,
        schema: {
          tags: ['cohorts'],
          params: CohortParams,
          response: { 200: CohortView, ...errorResponses },
        },
      },
      async (request) => {
        await caughtUp();
        const row = await cohorts.get(projectOf(request).id, request.params.id);
        return row ? toCohortView(row) : fail(notFound());
      },
    );

    activityRoutes(app, {
      path: '/api/projects/:project_id/cohorts',
      tags: ['cohorts'],
      params: CohortParams,
      page: activityPageSchema(CohortActivityEntry, 'CohortActivityPage'),
      store: ctx.store,
      users: accessReader(ctx.pool),
      readers: { one: cohortActivity, all: allCohortsActivity },
    });
  };
