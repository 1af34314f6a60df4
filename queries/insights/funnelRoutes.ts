import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  type FunnelInput,
  funnelActors,
  funnelCounts,
} from '../../projections/analytics/funnelReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { ActorsResponse, answerActors } from './actorsAnswer.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';
import { bodyAsQuery, FunnelQuery, funnelSteps, windowSeconds } from './funnelParams.ts';
import { chartRange } from './insightDates.ts';
import { intervalOf, seriesInput } from './insightParams.ts';

const ProjectParams = z.object({ project_id: z.string() });
const Body = z
  .record(z.string(), z.unknown())
  .optional()
  .describe(
    'POST: the same filter parameters as a JSON object (lists and objects as JSON, not text)',
  );

const FunnelStepView = z.object({
  action_id: z.string().nullable(),
  name: z.string(),
  order: z.number().int(),
  type: z.literal('events'),
  count: z.number().int().describe('persons who reached this step'),
  breakdown_value: z.string().optional(),
});
const FunnelResponse = z
  .object({
    result: z
      .union([z.array(FunnelStepView), z.array(z.array(FunnelStepView))])
      .describe('the steps; with a breakdown, one list of steps per value'),
  })
  .meta({ id: 'Funnel' });

/** GET reads the query; POST the query and the body (the body wins), as PostHog accepts both. */
function funnelQuery(request: FastifyRequest): FunnelQuery {
  const merged = { ...(request.query as Record<string, string>), ...bodyAsQuery(request.body) };
  const parsed = FunnelQuery.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    fail(
      invalidInput(
        `${String(issue.path[0] ?? 'query')}: ${issue.message}`,
        String(issue.path[0] ?? '') || null,
      ),
    );
  }
  return parsed.data;
}

/** Funnels (issue #10): `insights/funnel/` draws it, `persons/funnel/` lists a step's persons. */
export const funnelRoutes =
  (ctx: AppContext, ch: ClickHouse): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const input = async (request: FastifyRequest, q: FunnelQuery): Promise<FunnelInput> => {
      const now = ctx.now();
      const projectId = projectOf(request).id;
      const range = chartRange(q, intervalOf(q), now);
      const { steps, order } = funnelSteps(q);
      const series = await seriesInput(
        ctx.pool,
        projectId,
        now,
        q,
        { id: null, name: '', order: 0, math: 'total', properties: undefined },
        range,
      );
      const { event: _all, ...rest } = series;
      return {
        ...rest,
        steps,
        order,
        windowSeconds: windowSeconds(q),
        ...(q.breakdown ? { breakdown: { key: q.breakdown } } : {}),
      };
    };

    const aggregate = async (request: FastifyRequest) => {
      const q = funnelQuery(request);
      const funnel = await input(request, q);
      const { names, steps } = funnelSteps(q);
      await awaitAnalytics(ctx);
      const groups = await funnelCounts(ch, funnel);
      const view = (g: (typeof groups)[number] | undefined) =>
        steps.map((s, i) => ({
          action_id: s.event,
          name: names[i]!,
          order: i,
          type: 'events' as const,
          count: g?.counts[i] ?? 0,
          ...(q.breakdown ? { breakdown_value: g?.breakdownValue ?? '' } : {}),
        }));
      return { result: q.breakdown ? groups.map(view) : view(groups[0]) };
    };

    const actors = async (request: FastifyRequest, reply: FastifyReply) => {
      const q = funnelQuery(request);
      const funnel = await input(request, q);
      const step = q.funnel_step ?? 1;
      if (step === 0 || step === -1 || Math.abs(step) > funnel.steps.length)
        fail(
          invalidInput(
            `funnel_step must be 1…${funnel.steps.length}, or −2…−${funnel.steps.length} for those who dropped off before that step.`,
            'funnel_step',
          ),
        );
      await awaitAnalytics(ctx);
      return answerActors(request, reply, ctx.pool, projectOf(request).id, q, (limit, offset) =>
        funnelActors(ch, funnel, step, q.funnel_step_breakdown, limit, offset),
      );
    };

    const config = { scope: 'person:read' };
    for (const method of ['GET', 'POST'] as const) {
      app.route({
        method,
        url: '/api/projects/:project_id/insights/funnel/',
        config: { scope: 'insight:read' },
        schema: {
          tags: ['insights'],
          summary: `Funnel step counts (PostHog's legacy insight API; ${method})`,
          params: ProjectParams,
          querystring: method === 'GET' ? FunnelQuery : FunnelQuery.partial(),
          ...(method === 'POST' ? { body: Body } : {}),
          response: { 200: FunnelResponse, ...errorResponses },
        },
        handler: (request) => aggregate(request),
      });
      app.route({
        method,
        url: '/api/projects/:project_id/persons/funnel/',
        config,
        schema: {
          tags: ['persons'],
          summary: `Persons who reached, or dropped off before, a funnel step (${method})`,
          params: ProjectParams,
          querystring: method === 'GET' ? FunnelQuery : FunnelQuery.partial(),
          ...(method === 'POST' ? { body: Body } : {}),
          response: { 200: ActorsResponse.describe('text/csv with format=csv'), ...errorResponses },
        },
        handler: (request, reply) => actors(request, reply),
      });
    }
  };
