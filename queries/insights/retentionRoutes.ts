import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  retentionActors,
  retentionAppearances,
} from '../../projections/analytics/retentionReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { ActorsResponse, answerActors } from './actorsAnswer.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';
import {
  appearanceCohort,
  appearancesJson,
  RetentionAppearancesResponse,
} from './retentionAppearances.ts';
import { RetentionQuery, retentionInputOf, retentionResult } from './retentionResult.ts';

const Cell = z.object({ count: z.number().int() });
const RetentionResponse = z
  .object({
    result: z.array(
      z.object({
        values: z
          .array(Cell)
          .describe('value j: persons of this cohort back j intervals later (j = 0: the cohort)'),
        label: z.string(),
        date: z.string().describe('the cohort interval’s start'),
      }),
    ),
  })
  .meta({ id: 'Retention' });

/** Retention (issue #10): `insights/retention/` draws the table, `persons/retention/` lists a cell. */
export const retentionRoutes =
  (ctx: AppContext, ch: ClickHouse): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const input = (request: FastifyRequest, q: RetentionQuery) =>
      retentionInputOf(ctx, projectOf(request).id, q);

    app.get(
      '/api/projects/:project_id/insights/retention/',
      {
        config: { scope: 'insight:read' },
        schema: {
          tags: ['insights'],
          summary: 'Retention table (PostHog’s legacy insight API)',
          params: ProjectParams,
          querystring: RetentionQuery,
          response: { 200: RetentionResponse, ...errorResponses },
        },
      },
      async (request) => {
        return { result: await retentionResult(ctx, ch, projectOf(request).id, request.query) };
      },
    );

    app.get(
      '/api/projects/:project_id/persons/retention/',
      {
        config: { scope: 'person:read' },
        schema: {
          tags: ['persons'],
          summary: 'Persons of one retention cohort, or of one cell',
          params: ProjectParams,
          querystring: RetentionQuery,
          response: {
            200: z
              .union([ActorsResponse, RetentionAppearancesResponse])
              .describe('RetentionAppearances with display=ActionsTable; text/csv with format=csv'),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const q = request.query;
        const retention = await input(request, q);
        const table = q.display === 'ActionsTable' && q.format !== 'csv';
        const cohort = table
          ? appearanceCohort(q.selected_interval, q.breakdown_values)
          : (q.selected_interval ?? 0);
        if (cohort >= q.total_intervals)
          fail(
            invalidInput('selected_interval must be below total_intervals.', 'selected_interval'),
          );
        await awaitAnalytics(ctx);
        if (table) {
          const page = await retentionAppearances(ch, retention, cohort, q.limit, q.offset);
          const length = q.total_intervals - (q.selected_interval ?? 0);
          return appearancesJson(
            request,
            ctx.pool,
            projectOf(request).id,
            page,
            length,
            q.limit,
            q.offset,
          );
        }
        return answerActors(request, reply, ctx.pool, projectOf(request).id, q, (limit, offset) =>
          retentionActors(ch, retention, cohort, q.returning_interval, limit, offset),
        );
      },
    );
  };
