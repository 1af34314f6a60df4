import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  type PathInput,
  parseStepKey,
  pathActors,
  pathEdges,
} from '../../projections/analytics/pathsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { ActorsResponse, answerActors } from './actorsAnswer.ts';
import { resolveAll } from './allDates.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';
import { bodyAsQuery } from './funnelParams.ts';
import { chartRange } from './insightDates.ts';
import { InsightQuery, seriesInput } from './insightParams.ts';

const stepKey = (what: string) =>
  z.string().max(2000).optional().describe(`actors: ${what}, as \`<step>_<item>\` (e.g. 1_/home)`);

/** PostHog's paths filter parameters. */
const PathQuery = InsightQuery.omit({ events: true, interval: true }).extend({
  path_type: z
    .enum(['$pageview', '$screen', 'custom_event'])
    .optional()
    .describe(
      'items: $current_url of pageviews (default), $screen_name of screens, or names of custom (non-$) events',
    ),
  start_point: z
    .string()
    .max(2000)
    .optional()
    .describe('paths start at the first occurrence of this item'),
  end_point: z
    .string()
    .max(2000)
    .optional()
    .describe('paths end at the first occurrence of this item'),
  step_limit: z.coerce.number().int().min(2).max(20).default(5).describe('items per path'),
  edge_limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(50)
    .describe('edges answered, most persons first'),
  path_start_key: stepKey('persons who went from this item'),
  path_end_key: stepKey('… to this one (the next step)'),
  path_dropoff_key: stepKey('persons whose path ended at this item'),
});
type PathQuery = z.infer<typeof PathQuery>;

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

function pathQuery(request: FastifyRequest): PathQuery {
  const parsed = PathQuery.safeParse({
    ...(request.query as Record<string, string>),
    ...bodyAsQuery(request.body),
  });
  if (!parsed.success) {
    const attr = String(parsed.error.issues[0]!.path[0] ?? '');
    fail(invalidInput(`${attr}: ${parsed.error.issues[0]!.message}`, attr || null));
  }
  for (const key of ['path_start_key', 'path_end_key', 'path_dropoff_key'] as const) {
    const k = parsed.data[key];
    if (k !== undefined && parseStepKey(k) === null)
      fail(invalidInput(`${key} must be <step>_<item>, like 1_/home.`, key));
  }
  return parsed.data;
}

/** Paths (issue #10): `insights/path/` draws the edges, `persons/path/` lists who took one. */
export const pathRoutes =
  (ctx: AppContext, ch: ClickHouse): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const input = async (request: FastifyRequest, query: PathQuery): Promise<PathInput> => {
      const now = ctx.now();
      const q = await resolveAll(ctx, ch, projectOf(request).id, query);
      const range = chartRange(q, 'day', now);
      const series = await seriesInput(
        ctx.pool,
        projectOf(request).id,
        now,
        q as unknown as InsightQuery,
        { id: null, name: '', order: 0, math: 'total', properties: undefined },
        range,
      );
      const { event: _every, ...rest } = series;
      return {
        ...rest,
        pathType: q.path_type ?? '$pageview',
        stepLimit: q.step_limit,
        ...(q.start_point !== undefined ? { startPoint: q.start_point } : {}),
        ...(q.end_point !== undefined ? { endPoint: q.end_point } : {}),
      };
    };
    const edges = async (request: FastifyRequest) => {
      const q = pathQuery(request);
      const paths = await input(request, q);
      await awaitAnalytics(ctx);
      const result = await pathEdges(ch, paths, q.edge_limit);
      return {
        result: result.map((e) => ({ source: e.source, target: e.target, value: e.persons })),
      };
    };
    const actors = async (request: FastifyRequest, reply: FastifyReply) => {
      const q = pathQuery(request);
      const start = q.path_start_key && parseStepKey(q.path_start_key);
      const end = q.path_end_key && parseStepKey(q.path_end_key);
      if (start && end && end.step !== start.step + 1)
        fail(invalidInput('path_end_key must be the step after path_start_key.', 'path_end_key'));
      const paths = await input(request, q);
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
