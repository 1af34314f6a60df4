import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  correlationEventActors,
  eventCorrelations,
  funnelOutcomes,
  type Outcome,
} from '../../projections/analytics/correlationReader.ts';
import { analyticsPersonsReader } from '../../projections/persons/analyticsPersonsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { ActorsResponse, answerActors } from './actorsAnswer.ts';
import { resolveAll } from './allDates.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';
import { odds, oddsResult, propertyCorrelations, propertyMatches } from './correlationMath.ts';
import { FunnelQuery, funnelInput, parseFunnelRequest } from './funnelParams.ts';

const Body = z
  .record(z.string(), z.unknown())
  .optional()
  .describe('POST: the filter as a JSON object');

const CorrelationQuery = FunnelQuery.extend({
  funnel_correlation_type: z
    .enum(['events', 'properties'])
    .optional()
    .describe(
      'events (default): other events the persons did; properties: their person property values',
    ),
  funnel_correlation_names: z
    .string()
    .max(10_000)
    .optional()
    .describe('properties: JSON list of the person property keys to correlate'),
  funnel_correlation_exclude_event_names: z
    .string()
    .max(10_000)
    .optional()
    .describe('events: JSON list of event names left out'),
  funnel_correlation_person_entity: z
    .string()
    .max(10_000)
    .optional()
    .describe('actors: JSON `{"id": "<event>", "type": "events"}`: persons who did this event'),
  funnel_correlation_property_values: z
    .string()
    .max(10_000)
    .optional()
    .describe(
      'actors: JSON list of `{"key", "value", "type": "person"}`: persons with these property values',
    ),
  funnel_correlation_person_converted: z
    .enum(['true', 'false'])
    .optional()
    .describe('actors: true (default) the persons who converted, false those who dropped off'),
});
type CorrelationQuery = z.infer<typeof CorrelationQuery>;

const Correlation = z.object({
  event: z.object({
    event: z.string().describe('the event name, or `<key>::<value>` for a property'),
    properties: z.record(z.string(), z.unknown()),
    elements: z.array(z.unknown()),
  }),
  success_count: z.number().int(),
  failure_count: z.number().int(),
  odds_ratio: z.number(),
  correlation_type: z.enum(['success', 'failure']),
});
const CorrelationResponse = z
  .object({ result: z.object({ events: z.array(Correlation), skewed: z.boolean() }) })
  .meta({ id: 'FunnelCorrelation' });

function jsonList(text: string | undefined, attr: string): unknown[] {
  if (text === undefined) return [];
  try {
    const v = JSON.parse(text);
    if (Array.isArray(v)) return v;
  } catch {}
  return fail(invalidInput(`${attr} must be a JSON list.`, attr));
}

/** Persons whose requested property keys are read from Postgres at once. */
const PERSONS_PER_BATCH = 1_000;

/** Funnel correlation (issue #10): aggregate and actors, GET or POST. */
export const correlationRoutes =
  (ctx: AppContext, ch: ClickHouse): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    /**
     * The funnel's persons with only the `keys` of their properties, a batch at a time: a
     * funnel of many persons with large property sets never sits in memory whole (issue #26).
     */
    async function* personsOf(projectId: number, outcomes: readonly Outcome[], keys: string[]) {
      const reader = analyticsPersonsReader(ctx.pool);
      for (let i = 0; i < outcomes.length; i += PERSONS_PER_BATCH) {
        const batch = outcomes.slice(i, i + PERSONS_PER_BATCH);
        const converted = new Map(batch.map((o) => [o.person, o.converted]));
        const rows = await reader.propertiesOfKeys(projectId, [...converted.keys()], keys);
        for (const p of rows) yield { ...p, converted: converted.get(p.uuid) === true };
      }
    }
    const parse = (request: FastifyRequest) =>
      parseFunnelRequest(request.query, request.body, CorrelationQuery) as CorrelationQuery;

    const aggregate = async (request: FastifyRequest) => {
      const q = parse(request);
      const projectId = projectOf(request).id;
      const funnel = await funnelInput(
        ctx.pool,
        projectId,
        ctx.now(),
        await resolveAll(ctx, ch, projectId, q),
      );
      await awaitAnalytics(ctx);
      if (q.funnel_correlation_type === 'properties') {
        const keys = jsonList(q.funnel_correlation_names, 'funnel_correlation_names');
        if (keys.length === 0 || !keys.every((k) => typeof k === 'string'))
          fail(
            invalidInput(
              'funnel_correlation_names: a JSON list of person property keys is required.',
              'funnel_correlation_names',
            ),
          );
        const outcomes = await funnelOutcomes(ch, funnel);
        const counts = propertyCorrelations(keys as string[]);
        for await (const p of personsOf(projectId, outcomes, keys as string[]))
          counts.add(p.properties, p.converted);
        const successTotal = outcomes.filter((o) => o.converted).length;
        return { result: counts.result(successTotal, outcomes.length - successTotal) };
      }
      const excluded = new Set(
        jsonList(
          q.funnel_correlation_exclude_event_names,
          'funnel_correlation_exclude_event_names',
        ),
      );
      const c = await eventCorrelations(ch, funnel);
      const events = c.events
        .filter((e) => !excluded.has(e.event))
        .map((e) => ({
          name: e.event,
          properties: {},
          ...odds(e.success, e.failure, c.successTotal, c.failureTotal),
        }));
      return { result: oddsResult(events, c.successTotal, c.failureTotal) };
    };

    const actors = async (request: FastifyRequest, reply: FastifyReply) => {
      const q = parse(request);
      const projectId = projectOf(request).id;
      const converted = q.funnel_correlation_person_converted !== 'false';
      const funnel = await funnelInput(
        ctx.pool,
        projectId,
        ctx.now(),
        await resolveAll(ctx, ch, projectId, q),
      );
      await awaitAnalytics(ctx);
      if (q.funnel_correlation_person_entity !== undefined) {
        let entity: unknown;
        try {
          entity = JSON.parse(q.funnel_correlation_person_entity);
        } catch {}
        const id = (entity as { id?: unknown } | undefined)?.id;
        if (typeof id !== 'string')
          fail(
            invalidInput(
              'funnel_correlation_person_entity must be {"id": "<event>"}.',
              'funnel_correlation_person_entity',
            ),
          );
        return answerActors(request, reply, ctx.pool, projectId, q, (limit, offset) =>
          correlationEventActors(ch, funnel, id, converted, limit, offset),
        );
      }
      const wanted = jsonList(
        q.funnel_correlation_property_values,
        'funnel_correlation_property_values',
      );
      if (wanted.length === 0)
        fail(
          invalidInput(
            'Name the event (funnel_correlation_person_entity) or the property values.',
            'funnel_correlation_person_entity',
          ),
        );
      const outcomes = (await funnelOutcomes(ch, funnel)).filter((o) => o.converted === converted);
      const keys = wanted.flatMap((w) => {
        const key = (w as { key?: unknown } | null)?.key;
        return typeof key === 'string' ? [key] : [];
      });
      const matching: string[] = [];
      for await (const p of personsOf(projectId, outcomes, keys))
        if (propertyMatches(p.properties, wanted)) matching.push(p.uuid);
      matching.sort();
      return answerActors(request, reply, ctx.pool, projectId, q, async (limit, offset) => ({
        personUuids: matching.slice(offset, offset + limit),
        hasMore: matching.length > offset + limit,
      }));
    };

    for (const method of ['GET', 'POST'] as const) {
      const querystring = method === 'GET' ? CorrelationQuery : CorrelationQuery.partial();
      const body = method === 'POST' ? { body: Body } : {};
      app.route({
        method,
        url: '/api/projects/:project_id/insights/funnel/correlation/',
        config: { scope: 'insight:read' },
        schema: {
          tags: ['insights'],
          summary: `Events or person properties that go with converting (${method})`,
          params: ProjectParams,
          querystring,
          ...body,
          response: { 200: CorrelationResponse, ...errorResponses },
        },
        handler: (request) => aggregate(request),
      });
      app.route({
        method,
        url: '/api/projects/:project_id/persons/funnel/correlation/',
        config: { scope: 'person:read' },
        schema: {
          tags: ['persons'],
          summary: `Persons who converted or dropped off and did an event or had a property value (${method})`,
          params: ProjectParams,
          querystring,
          ...body,
          response: { 200: ActorsResponse.describe('text/csv with format=csv'), ...errorResponses },
        },
        handler: (request, reply) => actors(request, reply),
      });
    }
  };
