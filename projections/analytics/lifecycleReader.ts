/**
 * Lifecycle (PostHog's four statuses) per interval, persons after merges. For the series' event
 * in an interval a person is `new` when the interval holds the person's first event of any kind
 * (PostHog reads the person's `created_at`, which is set by that first event), `returning` when
 * active in the interval before too, `resurrecting` otherwise; `dormant` at the interval after
 * one the person was active in and is not. Persons come from analyticsSql.ts.
 */
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { runEventsQuery } from '../events/eventsReader.ts';
import { dateTimeParamSql, Params } from '../events/sqlParams.ts';
import {
  bucketSql,
  eventsWithPersons,
  type Interval,
  PERSON_SQL,
  type SeriesInput,
  seriesConditions,
} from './analyticsSql.ts';

export const LIFECYCLE_STATUSES = ['new', 'returning', 'resurrecting', 'dormant'] as const;
export type LifecycleStatus = (typeof LIFECYCLE_STATUSES)[number];

const UNIT: Record<Interval, string> = { hour: 'HOUR', day: 'DAY', week: 'WEEK', month: 'MONTH' };

export type LifecycleInput = SeriesInput & { interval: Interval };

/** One row per (person, interval, status) inside [from, to). */
function statuses(ch: ClickHouse, input: LifecycleInput, params: Params): string {
  const unit = UNIT[input.interval];
  const bucket = bucketSql(input.interval);
  const from = dateTimeParamSql(input.from, params);
  const to = dateTimeParamSql(input.to, params);
  // activity from one interval before the range: "returning" needs the interval before
  const widened = seriesConditions(
    input,
    params,
    `date_sub(${unit}, 1, ${bucketSql(input.interval, from)})`,
  );
  return `
    WITH activity AS (
      SELECT toString(${PERSON_SQL}) AS person, groupUniqArray(${bucket}) AS buckets
        FROM ${eventsWithPersons(ch, params, input.projectId)}
       WHERE ${widened.join(' AND ')}
       GROUP BY person
    ),
    firsts AS (
      SELECT toString(${PERSON_SQL}) AS person, min(e.timestamp) AS first_seen
        FROM ${eventsWithPersons(ch, params, input.projectId)}
       WHERE e.team_id = ${params.number(input.projectId)} AND pdi.deleted = 0
         AND person IN (SELECT person FROM activity)
       GROUP BY person
    )
    SELECT person, b AS bucket,
           multiIf(b = ${bucketSql(input.interval, 'f.first_seen')}, 'new',
                   has(buckets, date_sub(${unit}, 1, b)), 'returning', 'resurrecting') AS status
      FROM activity AS a INNER JOIN firsts AS f ON f.person = a.person
      ARRAY JOIN buckets AS b
     WHERE b >= ${bucketSql(input.interval, from)} AND b < ${to}
    UNION ALL
    SELECT person, date_add(${unit}, 1, b) AS bucket, 'dormant' AS status
      FROM activity ARRAY JOIN buckets AS b
     WHERE NOT has(buckets, date_add(${unit}, 1, b))
       AND date_add(${unit}, 1, b) >= ${bucketSql(input.interval, from)}
       AND date_add(${unit}, 1, b) < ${to}`;
}

export type LifecyclePoint = { bucket: string; status: LifecycleStatus; persons: number };

export async function lifecycleSeries(
  ch: ClickHouse,
  input: LifecycleInput,
): Promise<LifecyclePoint[]> {
  const params = new Params();
  const rows = await runEventsQuery<{ bucket: string; status: LifecycleStatus; persons: number }[]>(
    ch,
    `SELECT formatDateTime(bucket, '%Y-%m-%dT%H:%i:%SZ', 'UTC') AS bucket, status, count() AS persons
       FROM (${statuses(ch, input, params)}) GROUP BY bucket, status ORDER BY bucket, status`,
    params,
    'JSONEachRow',
  );
  return rows.map((r) => ({ ...r, persons: Number(r.persons) }));
}

/** The persons with `status` at the interval starting `bucket` (ISO). */
export async function lifecycleActors(
  ch: ClickHouse,
  input: LifecycleInput,
  status: LifecycleStatus,
  bucket: string,
  limit: number,
  offset: number,
): Promise<{ personUuids: string[]; hasMore: boolean }> {
  const params = new Params();
  const rows = await runEventsQuery<{ person: string }[]>(
    ch,
    `SELECT person FROM (${statuses(ch, input, params)})
      WHERE status = ${params.string(status)} AND bucket = ${dateTimeParamSql(bucket, params)}
      ORDER BY person LIMIT ${params.number(limit + 1)} OFFSET ${params.number(offset)}`,
    params,
    'JSONEachRow',
  );
  return { personUuids: rows.slice(0, limit).map((r) => r.person), hasMore: rows.length > limit };
}
