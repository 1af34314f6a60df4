import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Interval } from '../../projections/analytics/analyticsSql.ts';
import {
  type RetentionEntity,
  type RetentionInput,
  retentionActors,
  retentionAppearances,
  retentionTable,
} from '../../projections/analytics/retentionReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { ActorsResponse, answerActors } from './actorsAnswer.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';
import { addIntervals, rangeEnd, startOf } from './insightDates.ts';
import { InsightQuery, seriesInput } from './insightParams.ts';
import {
  appearanceCohort,
  appearancesJson,
  RetentionAppearancesResponse,
} from './retentionAppearances.ts';

const PERIODS = { Hour: 'hour', Day: 'day', Week: 'week', Month: 'month' } as const;

/** PostHog's retention filter parameters. */
const RetentionQuery = InsightQuery.omit({ events: true, interval: true, date_from: true }).extend({
  target_entity: z
    .string()
    .max(100_000)
    .optional()
    .describe(
      'JSON `{"id": "<event>", "type": "events", "properties": [...]}`: what puts a person in a cohort; default $pageview',
    ),
  returning_entity: z
    .string()
    .max(100_000)
    .optional()
    .describe('JSON entity: what counts as coming back; default the target'),
  period: z
    .enum(['Hour', 'Day', 'Week', 'Month'])
    .optional()
    .describe('cohort and return interval; default Day'),
  total_intervals: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(11)
    .describe('cohorts (intervals) shown, the last one holding date_to'),
  retention_type: z
    .enum(['retention_recurring', 'retention_first_time'])
    .optional()
    .describe(
      'recurring (default): a cohort is who did the target event in it; first time: who did it for the first time ever',
    ),
  selected_interval: z.coerce
    .number()
    .int()
    .min(0)
    .max(99)
    .optional()
    .describe('actors: the cohort (0 = the oldest)'),
  returning_interval: z.coerce
    .number()
    .int()
    .min(0)
    .max(99)
    .default(0)
    .describe(
      'actors: the cell — persons of the cohort who came back this many intervals later (0: the whole cohort)',
    ),
  display: z
    .string()
    .max(40)
    .optional()
    .describe(
      "actors: ActionsTable answers PostHog's `{result: [{person, appearances}], next}` (the cohort's persons, each with the intervals they came back in); else the actors page",
    ),
  breakdown_values: z
    .string()
    .max(100)
    .optional()
    .describe(
      "actors with display=ActionsTable: `[<cohort>]`, the cohort as PostHog's table links name it (selected_interval wins)",
    ),
});
type RetentionQuery = z.infer<typeof RetentionQuery>;

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

function entity(
  text: string | undefined,
  fallback: RetentionEntity,
  attr: string,
): RetentionEntity {
  if (text === undefined) return fallback;
  let e: unknown;
  try {
    e = JSON.parse(text);
  } catch {
    fail(invalidInput(`${attr} is not valid JSON.`, attr));
  }
  if (e === null || typeof e !== 'object' || Array.isArray(e))
    fail(invalidInput(`${attr} must be an object.`, attr));
  const o = e as Record<string, unknown>;
  if (o.type !== undefined && o.type !== 'events')
    fail(invalidInput(`${attr}: only events are supported.`, attr));
  if (o.id !== null && o.id !== undefined && typeof o.id !== 'string')
    fail(invalidInput(`${attr}.id must be an event name.`, attr));
  return { event: (o.id as string | undefined) ?? null, properties: o.properties };
}

/** Retention (issue #10): `insights/retention/` draws the table, `persons/retention/` lists a cell. */
export const retentionRoutes =
  (ctx: AppContext, ch: ClickHouse): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const input = async (request: FastifyRequest, q: RetentionQuery): Promise<RetentionInput> => {
      const now = ctx.now();
      const interval: Interval = PERIODS[q.period ?? 'Day'];
      const end = rangeEnd(q.date_to, now);
      const last = startOf(interval, new Date(end.getTime() - 1));
      const first = addIntervals(interval, last, -(q.total_intervals - 1));
      const starts = Array.from({ length: q.total_intervals }, (_, i) =>
        addIntervals(interval, first, i).toISOString().replace('.000Z', 'Z'),
      );
      const range = { from: first, to: addIntervals(interval, last, 1) };
      const target = entity(
        q.target_entity,
        { event: '$pageview', properties: undefined },
        'target_entity',
      );
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
        interval,
        starts,
        target,
        returning: entity(q.returning_entity, target, 'returning_entity'),
        firstTime: q.retention_type === 'retention_first_time',
      };
    };
    const period = (q: RetentionQuery) => q.period ?? 'Day';

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
        const q = request.query;
        const retention = await input(request, q);
        await awaitAnalytics(ctx);
        const table = await retentionTable(ch, retention);
        return {
          result: table.map((row, c) => ({
            values: row.map((count) => ({ count })),
            label: `${period(q)} ${c}`,
            date: retention.starts[c]!,
          })),
        };
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
