import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { parseStepKey, pathActors } from '../../projections/analytics/pathsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { ActorsResponse, answerActors } from './actorsAnswer.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';
import { PathQuery, parsePathRequest, pathInputOf, pathResult } from './pathResult.ts';

const PathResponse = z
  .object({
    result: z.array(
      z.object({
        source: z.string().describe('`<step>_<item>`'),
        target: z.string().describe('`<step + 1>_<item>`'),
        value: z.number().int().describe('persons'),
      }),
    ),
  })
  .meta({ id: 'Paths' });
const Body = z
  .record(z.string(), z.unknown())
  .optional()
  .describe('POST: the filter as a JSON object');

/** Paths (issue #10): `insights/path/` draws the edges, `persons/path/` lists who took one. */
export const pathRoutes =
  (ctx: AppContext, ch: ClickHouse): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const edges = async (request: FastifyRequest) => {
      const q = parsePathRequest(request.query, request.body);
      return { result: await pathResult(ctx, ch, projectOf(request).id, q) };
    };
    const actors = async (request: FastifyRequest, reply: FastifyReply) => {
      const q = parsePathRequest(request.query, request.body);
      const start = q.path_start_key && parseStepKey(q.path_start_key);
      const end = q.path_end_key && parseStepKey(q.path_end_key);
      if (start && end && end.step !== start.step + 1)
        fail(invalidInput('path_end_key must be the step after path_start_key.', 'path_end_key'));
      const paths = await pathInputOf(ctx, ch, projectOf(request).id, q);
      await awaitAnalytics(ctx);
      return answerActors(request, reply, ctx.pool, projectOf(request).id, q, (limit, offset) =>
        pathActors(
          ch,
          paths,
          {
            ...(q.path_start_key ? { start: q.path_start_key } : {}),
            ...(q.path_end_key ? { end: q.path_end_key } : {}),
            ...(q.path_dropoff_key ? { dropoff: q.path_dropoff_key } : {}),
          },
          limit,
          offset,
        ),
      );
    };
    for (const method of ['GET', 'POST'] as const) {
      const querystring = method === 'GET' ? PathQuery : PathQuery.partial();
      const body = method === 'POST' ? { body: Body } : {};
      app.route({
        method,
        url: '/api/projects/:project_id/insights/path/',
        config: { scope: 'insight:read' },
        schema: {
          tags: ['insights'],
          summary: `Path edges (PostHog’s legacy insight API; ${method})`,
          params: ProjectParams,
          querystring,
          ...body,
          response: { 200: PathResponse, ...errorResponses },
        },
        handler: (request) => edges(request),
      });
      app.route({
        method,
        url: '/api/projects/:project_id/persons/path/',
        config: { scope: 'person:read' },
        schema: {
          tags: ['persons'],
          summary: `Persons who took a path edge, or dropped off after an item (${method})`,
          params: ProjectParams,
          querystring,
          ...body,
          response: { 200: ActorsResponse.describe('text/csv with format=csv'), ...errorResponses },
        },
        handler: (request, reply) => actors(request, reply),
      });
    }
  };
