import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  LIFECYCLE_STATUSES,
  lifecycleActors,
} from '../../projections/analytics/lifecycleReader.ts';
import { stickinessActors, trendActors } from '../../projections/analytics/trendsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { ActorsResponse, type ActorsSource, answerActors } from './actorsAnswer.ts';
import { resolveAll } from './allDates.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';
import { chartRange, pointRange } from './insightDates.ts';
import { breakdownOf, entityOf, InsightQuery, intervalOf, seriesInput } from './insightParams.ts';
import { InsightSeriesResponse, insightSeries, TrendQuery } from './insightSeries.ts';

/**
 * Person analytics (issue #10): `insights/trend/` draws the chart (trends, stickiness,
 * lifecycle), `persons/trends/`, `persons/stickiness/`, `persons/lifecycle/` list the persons
 * behind one of its points (PostHog's legacy actors endpoints).
 */
export const insightRoutes =
  (ctx: AppContext, ch: ClickHouse): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const caughtUp = () => awaitAnalytics(ctx);
    const actors = (
      request: FastifyRequest,
      q: InsightQuery,
      reply: FastifyReply,
      source: ActorsSource,
    ) => answerActors(request, reply, ctx.pool, projectOf(request).id, q, source);
    const schema = <Q extends z.ZodObject>(summary: string, querystring: Q) => ({
      tags: ['persons'],
      summary,
      params: ProjectParams,
      querystring,
      response: { 200: ActorsResponse.describe('text/csv with format=csv'), ...errorResponses },
    });
    const config = { scope: 'person:read', openapi: { csv: true } };

    app.get(
      '/api/projects/:project_id/insights/trend/',
      {
        config: { scope: 'insight:read' },
        schema: {
          tags: ['insights'],
          summary: 'Trends, stickiness or lifecycle series (PostHog’s legacy insight API)',
          params: ProjectParams,
          querystring: TrendQuery,
          response: { 200: InsightSeriesResponse, ...errorResponses },
        },
      },
      async (request) => {
        await caughtUp();
        return insightSeries(ctx, ch, projectOf(request).id, request.query);
      },
    );

    app.get(
      '/api/projects/:project_id/persons/trends/',
      { config, schema: schema('Persons behind one point of a trend', InsightQuery) },
      async (request, reply) => {
        const now = ctx.now();
        const projectId = projectOf(request).id;
        const q = await resolveAll(ctx, ch, projectId, request.query);
        const range = pointRange(q, intervalOf(q), now);
        const input = await seriesInput(ctx.pool, projectId, now, q, entityOf(q), range);
        const breakdown = await breakdownOf(ctx.pool, projectId, q);
        await caughtUp();
        return actors(request, q, reply, (limit, offset) =>
          trendActors(
            ch,
            {
              ...input,
              ...(breakdown ? { breakdown } : {}),
              ...(q.breakdown_value !== undefined ? { breakdownValue: q.breakdown_value } : {}),
            },
            limit,
            offset,
          ),
        );
      },
    );

    app.get(
      '/api/projects/:project_id/persons/stickiness/',
      {
        config,
        schema: schema(
          'Persons active on exactly N intervals of the range',
          InsightQuery.extend({
            stickiness_days: z.coerce
              .number()
              .int()
              .min(1)
              .max(10_000)
              .describe('N: the number of intervals'),
          }),
        ),
      },
      async (request, reply) => {
        const now = ctx.now();
        const projectId = projectOf(request).id;
        const q = await resolveAll(ctx, ch, projectId, request.query);
        const interval = intervalOf(q);
        const range = chartRange(q, interval, now);
        const input = await seriesInput(ctx.pool, projectId, now, q, entityOf(q), range);
        await caughtUp();
        return actors(request, q, reply, (limit, offset) =>
          stickinessActors(ch, { ...input, interval }, q.stickiness_days, limit, offset),
        );
      },
    );

    app.get(
      '/api/projects/:project_id/persons/lifecycle/',
      {
        config,
        schema: schema(
          'Persons with one lifecycle status at one interval',
          InsightQuery.extend({
            lifecycle_type: z
              .enum(LIFECYCLE_STATUSES)
              .describe('new, returning, resurrecting or dormant'),
            target_date: z.string().max(64).describe('the interval (any instant in it; ISO 8601)'),
          }),
        ),
      },
      async (request, reply) => {
        const now = ctx.now();
        const projectId = projectOf(request).id;
        const q = await resolveAll(ctx, ch, projectId, request.query);
        const interval = intervalOf(q);
        const range = chartRange(q, interval, now);
        const target = pointRange({ date_from: q.target_date }, interval, now).from;
        const input = await seriesInput(ctx.pool, projectId, now, q, entityOf(q), range);
        await caughtUp();
        return actors(request, q, reply, (limit, offset) =>
          lifecycleActors(
            ch,
            { ...input, interval },
            q.lifecycle_type,
            target.toISOString(),
            limit,
            offset,
          ),
        );
      },
    );
  };
