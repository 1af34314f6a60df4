/**
 * `insights/trend/`: the series a client draws (PostHog's legacy insight result shape), for
 * `shown_as` Volume (trends, the default), Stickiness and Lifecycle.
 */
import { z } from 'zod';
import { BREAKDOWN_OTHER, type Interval } from '../../projections/analytics/analyticsSql.ts';
import {
  LIFECYCLE_STATUSES,
  lifecycleSeries,
} from '../../projections/analytics/lifecycleReader.ts';
import { stickinessSeries, trendSeries } from '../../projections/analytics/trendsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { resolveAll } from './allDates.ts';
import { buckets, chartRange, dayOf, labelOf, type Range } from './insightDates.ts';
import {
  breakdownOf,
  type Entity,
  entitiesOf,
  InsightQuery,
  intervalOf,
  seriesInput,
  withActions,
} from './insightParams.ts';

export const TrendQuery = InsightQuery.extend({
  shown_as: z
    .enum(['Volume', 'Stickiness', 'Lifecycle'])
    .optional()
    .describe(
      'Volume (default): counts per interval; Stickiness: persons by number of active intervals; Lifecycle: new/returning/resurrecting/dormant persons per interval',
    ),
  breakdown_limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(25)
    .describe('breakdown values shown, most events first; the others are summed as "Other"'),
  breakdown_hide_other_aggregation: z
    .enum(['true', 'false'])
    .optional()
    .describe(
      'true: no "Other" series (`$$_posthog_breakdown_other_$$`) for the values past the limit',
    ),
});
export type TrendQuery = z.infer<typeof TrendQuery>;

const SeriesItem = z.object({
  action: z.object({
    id: z.union([z.string(), z.number()]).nullable().describe('an event name, or an action id'),
    type: z.enum(['events', 'actions']),
    name: z.string(),
    order: z.number(),
    math: z.string(),
  }),
  label: z.string(),
  count: z.number().describe('sum of data'),
  data: z.array(z.number()),
  labels: z.array(z.string()),
  days: z.array(z.union([z.string(), z.number()])),
  breakdown_value: z.string().optional(),
  status: z.enum(LIFECYCLE_STATUSES).optional().describe('Lifecycle: the status of this series'),
});
export const InsightSeriesResponse = z
  .object({ result: z.array(SeriesItem), timezone: z.literal('UTC') })
  .meta({ id: 'InsightSeries' });
type SeriesItem = z.infer<typeof SeriesItem>;

const actionOf = (e: Entity) => ({
  id: e.type === 'actions' ? Number(e.id) : e.id,
  type: e.type ?? 'events',
  name: e.name,
  order: e.order,
  math: e.math,
});
const breakdownLabel = (bv: string) => (bv === '' ? 'none' : bv === BREAKDOWN_OTHER ? 'Other' : bv);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function axis(interval: Interval, range: Range) {
  const starts = buckets(interval, range);
  return {
    starts: starts.map((b) => b.toISOString().replace('.000Z', 'Z')),
    days: starts.map((b) => dayOf(interval, b)),
    labels: starts.map((b) => labelOf(interval, b)),
  };
}

/**
 * Data points one answer may carry (series × intervals): every series repeats the axis' days and
 * labels, so 1,001 breakdown series over 8,760 hours would be ≈ 26 million JSON values.
 */
export const MAX_SERIES_POINTS = 1_000_000;

function checkPoints(q: TrendQuery, entityCount: number, intervals: number) {
  const breakdown = q.breakdown !== undefined && q.breakdown !== '';
  const series =
    q.shown_as === 'Lifecycle'
      ? LIFECYCLE_STATUSES.length
      : entityCount *
        (breakdown && (q.shown_as ?? 'Volume') === 'Volume' ? q.breakdown_limit + 1 : 1);
  if (series * intervals > MAX_SERIES_POINTS)
    fail(
      invalidInput(
        `The chart would hold ${series} series × ${intervals} intervals, more than ${MAX_SERIES_POINTS} data points: use a longer interval${breakdown ? ' or a smaller breakdown_limit' : ''}.`,
        breakdown ? 'breakdown_limit' : 'interval',
      ),
    );
}

export async function insightSeries(
  ctx: AppContext,
  ch: ClickHouse,
  projectId: number,
  query: TrendQuery,
): Promise<{ result: SeriesItem[]; timezone: 'UTC' }> {
  const now = ctx.now();
  const q = await resolveAll(ctx, ch, projectId, query);
  const interval = intervalOf(q);
  const range = chartRange(q, interval, now);
  const entities = await withActions(ctx.pool, projectId, entitiesOf(q));
  const result: SeriesItem[] = [];
  const { starts, days, labels } = axis(interval, range);
  checkPoints(q, entities.length, starts.length);
  const breakdown =
    q.shown_as === undefined || q.shown_as === 'Volume'
      ? await breakdownOf(ctx.pool, projectId, q)
      : undefined;
  for (const entity of q.shown_as === 'Lifecycle' ? entities.slice(0, 1) : entities) {
    const input = await seriesInput(ctx.pool, projectId, now, q, entity, range);
    if (q.shown_as === 'Stickiness') {
      const rows = await stickinessSeries(ch, { ...input, interval });
      // indexed, not searched per interval: O(intervals), not O(intervals²)
      const data = new Array<number>(starts.length).fill(0);
      for (const r of rows)
        if (r.intervals >= 1 && r.intervals <= data.length) data[r.intervals - 1] = r.persons;
      const unit = (k: number) => `${k} ${interval}${k === 1 ? '' : 's'}`;
      result.push({
        action: actionOf(entity),
        label: entity.name,
        count: sum(data),
        data,
        labels: data.map((_, i) => unit(i + 1)),
        days: data.map((_, i) => i + 1),
      });
    } else if (q.shown_as === 'Lifecycle') {
      const rows = await lifecycleSeries(ch, { ...input, interval });
      // indexed by (status, bucket), not searched per bucket: O(buckets), not O(buckets²)
      const persons = new Map(rows.map((r) => [`${r.status} ${r.bucket}`, r.persons]));
      for (const status of LIFECYCLE_STATUSES) {
        const sign = status === 'dormant' ? -1 : 1;
        const data = starts.map((s) => sign * (persons.get(`${status} ${s}`) ?? 0));
        result.push({
          action: actionOf(entity),
          label: `${entity.name} - ${status}`,
          count: sum(data),
          data,
          labels,
          days,
          status,
        });
      }
    } else {
      const rows = await trendSeries(ch, {
        ...input,
        interval,
        ...(breakdown
          ? {
              breakdown,
              breakdownLimit: q.breakdown_limit,
              hideOther: q.breakdown_hide_other_aggregation === 'true',
            }
          : {}),
      });
      const value = (r: (typeof rows)[number]) => (entity.math === 'dau' ? r.persons : r.total);
      const groups = new Map<string | null, Map<string, number>>();
      for (const r of rows) {
        const g = groups.get(r.breakdownValue) ?? new Map<string, number>();
        g.set(r.bucket, value(r));
        groups.set(r.breakdownValue, g);
      }
      if (groups.size === 0 && !breakdown) groups.set(null, new Map());
      const series = [...groups].map(([bv, byBucket]) => {
        const data = starts.map((s) => byBucket.get(s) ?? 0);
        return { bv, data, count: sum(data) };
      });
      // ClickHouse sent the top values and "Other" (trendsReader.ts): "Other" comes last
      const other = (bv: string | null) => (bv === BREAKDOWN_OTHER ? 1 : 0);
      series.sort(
        (a, b) =>
          other(a.bv) - other(b.bv) ||
          b.count - a.count ||
          String(a.bv).localeCompare(String(b.bv)),
      );
      for (const s of series)
        result.push({
          action: actionOf(entity),
          label: s.bv === null ? entity.name : `${entity.name} - ${breakdownLabel(s.bv)}`,
          count: s.count,
          data: s.data,
          labels,
          days,
          ...(s.bv === null ? {} : { breakdown_value: s.bv }),
        });
    }
  }
  return { result, timezone: 'UTC' };
}
