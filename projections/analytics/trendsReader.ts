/**
 * Trends and stickiness over the ClickHouse events table, counting persons after merges
 * (analyticsSql.ts). Every number is computed here; routes only shape the answer.
 */
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { runEventsQuery } from '../events/eventsReader.ts';
import { Params } from '../events/sqlParams.ts';
import {
  BREAKDOWN_OTHER,
  type Breakdown,
  breakdownSql,
  bucketSql,
  DEFAULT_BREAKDOWN_LIMIT,
  eventsWithPersons,
  type Interval,
  PERSON_SQL,
  type SeriesInput,
  seriesConditions,
} from './analyticsSql.ts';

export type TrendPoint = {
  /** the interval's start, ISO 8601 UTC */
  bucket: string;
  /** the breakdown value ('' when the event lacks the property), null without a breakdown */
  breakdownValue: string | null;
  total: number;
  persons: number;
};

export type TrendInput = SeriesInput & {
  interval: Interval;
  breakdown?: Breakdown;
  /** with a breakdown: the values kept (most events in the range first); the rest are "Other" */
  breakdownLimit?: number;
  /** with a breakdown: leave the events of the other values out instead of summing them */
  hideOther?: boolean;
};

const ISO_BUCKET = (b: string) => `formatDateTime(${b}, '%Y-%m-%dT%H:%i:%SZ', 'UTC')`;

/**
 * The breakdown value of an event as the chart shows it: one of the top `breakdownLimit` values
 * (by events in the range, then by value) or `BREAKDOWN_OTHER`. The top values are a subquery,
 * so ClickHouse returns at most (limit + 1) rows per bucket, however many values there are.
 */
function boundedBreakdown(
  ch: ClickHouse,
  input: TrendInput & { breakdown: Breakdown },
  params: Params,
): { value: string; topOnly: string } {
  const top = `SELECT ${breakdownSql(input.breakdown, params)} AS top_value
                 FROM ${eventsWithPersons(ch, params, input.projectId)}
                WHERE ${seriesConditions(input, params).join(' AND ')}
                GROUP BY top_value ORDER BY count() DESC, top_value
                LIMIT ${params.number(input.breakdownLimit ?? DEFAULT_BREAKDOWN_LIMIT)}`;
  const value = breakdownSql(input.breakdown, params);
  return {
    value: `if(${value} IN (${top}), ${value}, ${params.string(BREAKDOWN_OTHER)})`,
    topOnly: `${value} IN (${top})`,
  };
}

/**
 * Events and distinct persons per interval (and breakdown value: the top values and "Other"),
 * intervals without events left out.
 */
export async function trendSeries(ch: ClickHouse, input: TrendInput): Promise<TrendPoint[]> {
  const params = new Params();
  const where = seriesConditions(input, params);
  let bv = 'NULL';
  if (input.breakdown) {
    const bounded = boundedBreakdown(ch, { ...input, breakdown: input.breakdown }, params);
    bv = bounded.value;
    if (input.hideOther) where.push(bounded.topOnly);
  }
  const rows = await runEventsQuery<
    { bucket: string; bv: string | null; total: number; persons: number }[]
  >(
    ch,
    `SELECT ${ISO_BUCKET(bucketSql(input.interval))} AS bucket, ${bv} AS bv,
            count() AS total, uniqExact(${PERSON_SQL}) AS persons
       FROM ${eventsWithPersons(ch, params, input.projectId)}
      WHERE ${where.join(' AND ')}
      GROUP BY bucket, bv ORDER BY bucket, bv`,
    params,
    'JSONEachRow',
  );
  return rows.map((r) => ({
    bucket: r.bucket,
    breakdownValue: r.bv,
    total: Number(r.total),
    persons: Number(r.persons),
  }));
}

export type ActorsPage = {
  /** person uuids, most events first (then uuid), at most `limit` */
  personUuids: string[];
  /** the number of events each listed person did in the data point */
  counts: number[];
  hasMore: boolean;
};

/** The persons behind one data point: the series in [from, to), optionally one breakdown value. */
export async function trendActors(
  ch: ClickHouse,
  input: SeriesInput & { breakdown?: Breakdown; breakdownValue?: string },
  limit: number,
  offset: number,
): Promise<ActorsPage> {
  const params = new Params();
  const where = seriesConditions(input, params);
  if (input.breakdown && input.breakdownValue !== undefined)
    where.push(`${breakdownSql(input.breakdown, params)} = ${params.string(input.breakdownValue)}`);
  const rows = await runEventsQuery<{ person: string; n: number }[]>(
    ch,
    `SELECT toString(${PERSON_SQL}) AS person, count() AS n
       FROM ${eventsWithPersons(ch, params, input.projectId)}
      WHERE ${where.join(' AND ')}
      GROUP BY person ORDER BY n DESC, person
      LIMIT ${params.number(limit + 1)} OFFSET ${params.number(offset)}`,
    params,
    'JSONEachRow',
  );
  return page(rows, limit);
}

function page(rows: { person: string; n: number }[], limit: number): ActorsPage {
  const shown = rows.slice(0, limit);
  return {
    personUuids: shown.map((r) => r.person),
    counts: shown.map((r) => Number(r.n)),
    hasMore: rows.length > limit,
  };
}

/** Per person, the number of intervals of the range with the series' event. */
const activeIntervals = (ch: ClickHouse, input: TrendInput, params: Params) =>
  `SELECT toString(${PERSON_SQL}) AS person, uniqExact(${bucketSql(input.interval)}) AS intervals
     FROM ${eventsWithPersons(ch, params, input.projectId)}
    WHERE ${seriesConditions(input, params).join(' AND ')}
    GROUP BY person`;

/** Stickiness: how many persons were active on exactly N intervals, for each N seen. */
export async function stickinessSeries(
  ch: ClickHouse,
  input: TrendInput,
): Promise<{ intervals: number; persons: number }[]> {
  const params = new Params();
  const rows = await runEventsQuery<{ intervals: number; persons: number }[]>(
    ch,
    `SELECT intervals, count() AS persons FROM (${activeIntervals(ch, input, params)})
      GROUP BY intervals ORDER BY intervals`,
    params,
    'JSONEachRow',
  );
  return rows.map((r) => ({ intervals: Number(r.intervals), persons: Number(r.persons) }));
}

/** The persons active on exactly `intervals` intervals of the range. */
export async function stickinessActors(
  ch: ClickHouse,
  input: TrendInput,
  intervals: number,
  limit: number,
  offset: number,
): Promise<ActorsPage> {
  const params = new Params();
  const rows = await runEventsQuery<{ person: string; n: number }[]>(
    ch,
    `SELECT person, intervals AS n FROM (${activeIntervals(ch, input, params)})
      WHERE intervals = ${params.number(intervals)}
      ORDER BY person LIMIT ${params.number(limit + 1)} OFFSET ${params.number(offset)}`,
    params,
    'JSONEachRow',
  );
  return page(rows, limit);
}
