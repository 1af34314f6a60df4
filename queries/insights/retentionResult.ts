import { z } from 'zod';
import type { Interval } from '../../projections/analytics/analyticsSql.ts';
import {
  type RetentionEntity,
  type RetentionInput,
  retentionTable,
} from '../../projections/analytics/retentionReader.ts';
import { prepareHogQLFilters } from '../../projections/events/propertyFilters.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';
import { addIntervals, rangeEnd, startOf } from './insightDates.ts';
import { InsightQuery, seriesInput } from './insightParams.ts';

const PERIODS = { Hour: 'hour', Day: 'day', Week: 'week', Month: 'month' } as const;

/** PostHog's retention filter parameters. */
export const RetentionQuery = InsightQuery.omit({
  events: true,
  interval: true,
  date_from: true,
}).extend({
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
export type RetentionQuery = z.infer<typeof RetentionQuery>;

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

/** The retention reader's input: the cohort intervals, the target and returning entities, filters. */
export async function retentionInputOf(
  ctx: AppContext,
  projectId: number,
  q: RetentionQuery,
): Promise<RetentionInput> {
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
    projectId,
    now,
    q as unknown as InsightQuery,
    { id: null, name: '', order: 0, math: 'total', properties: undefined },
    range,
  );
  const { event: _every, ...rest } = series;
  const returning = entity(q.returning_entity, target, 'returning_entity');
  await prepareHogQLFilters(target.properties, returning.properties);
  return {
    ...rest,
    interval,
    starts,
    target,
    returning,
    firstTime: q.retention_type === 'retention_first_time',
  };
}

/** A row of the retention table as `insights/retention/` answers it (PostHog's legacy result). */
export type RetentionRow = { values: { count: number }[]; label: string; date: string };

/** The retention table; `insights/retention/` and a saved retention insight's refresh answer it. */
export async function retentionResult(
  ctx: AppContext,
  ch: ClickHouse,
  projectId: number,
  q: RetentionQuery,
): Promise<RetentionRow[]> {
  const retention = await retentionInputOf(ctx, projectId, q);
  await awaitAnalytics(ctx);
  const table = await retentionTable(ch, retention);
  return table.map((row, c) => ({
    values: row.map((count) => ({ count })),
    label: `${q.period ?? 'Day'} ${c}`,
    date: retention.starts[c]!,
  }));
}
