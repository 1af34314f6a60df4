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
import {
  ActivityQuery,
  activityAnswer,
  PageQuery,
  pageAnswer,
  paginated,
} from '../../src/http/pagination.ts';
import { ProjectParams } from '../../src/http/params.ts';
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

    const ActivityPage = z
      .object({
        count: z.number().int(),
        total_count: z.number().int(),
        next: z.string().nullable(),
        previous: z.string().nullable(),
        results: z.array(CohortActivityEntry),
      })
      .meta({ id: 'CohortActivityPage' });
    const users = accessReader(ctx.pool);
    app.get(
      '/api/projects/:project_id/cohorts/activity/',
      {
        config: { scope: 'activity_log:read' },
        schema: {
          tags: ['cohorts'],
          params: ProjectParams,
          querystring: ActivityQuery,
          response: { 200: ActivityPage, ...errorResponses },
        },
      },
      async (request) => {
        const page = await allCohortsActivity(
          ctx.store,
          users,
          projectOf(request).id,
          request.query,
        );
        return activityAnswer(request, request.query, page);
      },
    );
    app.get(
      '/api/projects/:project_id/cohorts/:id/activity/',
      {
        config: { scope: 'activity_log:read' },
        schema: {
          tags: ['cohorts'],
          params: CohortParams,
          querystring: ActivityQuery,
          response: { 200: ActivityPage, ...errorResponses },
        },
      },
      async (request) => {
        const page = await cohortActivity(
          ctx.store,
          users,
          projectOf(request).id,
          request.params.id,
          request.query,
        );
        if (!page) fail(notFound());
        return activityAnswer(request, request.query, page);
      },
    );
  };
