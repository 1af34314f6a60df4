import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { funnelActors } from '../../projections/analytics/funnelReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { ActorsResponse, answerActors } from './actorsAnswer.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';
import { FunnelQuery, parseFunnelRequest, stepBreakdownValue } from './funnelParams.ts';
import { funnelInputOf, funnelResult } from './funnelResult.ts';

const Body = z
  .record(z.string(), z.unknown())
  .optional()
  .describe(
    'POST: the same filter parameters as a JSON object (lists and objects as JSON, not text)',
  );

const FunnelStepView = z.object({
  action_id: z
    .union([z.string(), z.number()])
    .nullable()
    .describe('an event name, or an action id'),
  name: z.string(),
  order: z.number().int(),
  type: z.enum(['events', 'actions']),
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

/** Funnels (issue #10): `insights/funnel/` draws it, `persons/funnel/` lists a step's persons. */
export const funnelRoutes =
  (ctx: AppContext, ch: ClickHouse): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const aggregate = async (request: FastifyRequest) => {
      const q = parseFunnelRequest(request.query, request.body);
      return { result: await funnelResult(ctx, ch, projectOf(request).id, q) };
    };

    const actors = async (request: FastifyRequest, reply: FastifyReply) => {
      const q = parseFunnelRequest(request.query, request.body);
      const funnel = await funnelInputOf(ctx, ch, projectOf(request).id, q);
      const step = q.funnel_step ?? 1;
      const breakdownValue = stepBreakdownValue(q.funnel_step_breakdown);
      if (step === 0 || step === -1 || Math.abs(step) > funnel.steps.length)
        fail(
          invalidInput(
            `funnel_step must be 1…${funnel.steps.length}, or −2…−${funnel.steps.length} for those who dropped off before that step.`,
            'funnel_step',
          ),
        );
      await awaitAnalytics(ctx);
      return answerActors(request, reply, ctx.pool, projectOf(request).id, q, (limit, offset) =>
        funnelActors(ch, funnel, step, breakdownValue, limit, offset),
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
