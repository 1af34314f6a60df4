/**
 * Retention over the ClickHouse events table, persons after merges (analyticsSql.ts). Cohort c
 * (0-based interval of the range) holds the persons who did the target event in it (recurring)
 * or did it for the first time ever in it (first time); cell (c, j) the persons of cohort c who
 * did the returning event j intervals later (j = 0: the whole cohort, as PostHog shows it).
 */
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { runEventsQuery } from '../events/eventsReader.ts';
import { compilePropertyFilters } from '../events/propertyFilters.ts';
import { Params } from '../events/sqlParams.ts';
import {
  bucketSql,
  eventsWithPersons,
  type Interval,
  PERSON_SQL,
  type SeriesInput,
  seriesConditions,
} from './analyticsSql.ts';

export type RetentionEntity = { event: string | null; properties: unknown };

export type RetentionInput = Omit<SeriesInput, 'event'> & {
  interval: Interval;
  /** the interval starts of the range, ISO `YYYY-MM-DDTHH:MM:SSZ`, oldest first */
  starts: readonly string[];
  target: RetentionEntity;
  returning: RetentionEntity;
  firstTime: boolean;
};

function entitySql(e: RetentionEntity, input: RetentionInput, params: Params): string {
  const parts: string[] = [];
  if (e.event !== null) parts.push(`e.event = ${params.string(e.event)}`);
  const filters = compilePropertyFilters(e.properties, params, input.now);
  if (filters) parts.push(filters);
  return parts.length === 0 ? '1' : `(${parts.join(' AND ')})`;
}

/** Per person: `cohorts` (interval indexes) and `returns` (interval indexes). */
function perPerson(ch: ClickHouse, input: RetentionInput, params: Params): string {
  const starts = params.strings(input.starts);
  const pos = (ts: string) =>
    `indexOf(${starts}, formatDateTime(${bucketSql(input.interval, ts)}, '%Y-%m-%dT%H:%i:%SZ', 'UTC'))`;
  const target = entitySql(input.target, input, params);
  const returning = entitySql(input.returning, input, params);
  const inRange = seriesConditions({ ...input, event: null }, params).join(' AND ');
  const from = eventsWithPersons(ch, params, input.projectId);
  const base = `SELECT toString(${PERSON_SQL}) AS person,
                       groupUniqArrayIf(${pos('e.timestamp')} - 1, ${target}) AS recurring,
                       groupUniqArrayIf(${pos('e.timestamp')} - 1, ${returning}) AS returns
                  FROM ${from}
                 WHERE ${inRange} AND (${target} OR ${returning})
                 GROUP BY person`;
  if (!input.firstTime) return `SELECT person, recurring AS cohorts, returns FROM (${base})`;
  // First time: the cohort of the person's first target event ever (1-based position in the
  // range; 0 when it falls outside, as for a person with no match in the join).
  const firsts = `SELECT toString(${PERSON_SQL}) AS fp, ${pos('min(e.timestamp)')} AS first_pos
                    FROM ${from}
                   WHERE e.team_id = ${params.number(input.projectId)} AND pdi.deleted = 0 AND ${target}
                   GROUP BY fp`;
  return `SELECT b.person AS person, if(f.first_pos > 0, [toInt64(f.first_pos) - 1], []) AS cohorts, b.returns AS returns
            FROM (${base}) AS b LEFT JOIN (${firsts}) AS f ON f.fp = b.person`;
}

/** Cell counts: `counts[c][j]` persons, for every cohort c and j = 0 … (intervals − 1 − c). */
export async function retentionTable(ch: ClickHouse, input: RetentionInput): Promise<number[][]> {
  const params = new Params();
  const n = input.starts.length;
  const rows = await runEventsQuery<{ c: number; j: number; persons: number }[]>(
    ch,
    `SELECT c, j, count() AS persons FROM (${perPerson(ch, input, params)})
      ARRAY JOIN cohorts AS c
      ARRAY JOIN arrayFilter(j -> j = 0 OR has(returns, c + j), range(toUInt32(${n} - c))) AS j
      GROUP BY c, j`,
    params,
    'JSONEachRow',
  );
  const table = Array.from({ length: n }, (_, c) => Array.from({ length: n - c }, () => 0));
  for (const r of rows) table[Number(r.c)]![Number(r.j)] = Number(r.persons);
  return table;
}

/** The persons of cohort `cohort` retained `returningInterval` intervals later (0: the cohort). */
export async function retentionActors(
  ch: ClickHouse,
  input: RetentionInput,
  cohort: number,
  returningInterval: number,
  limit: number,
  offset: number,
): Promise<{ personUuids: string[]; hasMore: boolean }> {
  const params = new Params();
  const c = params.number(cohort);
  const j = params.number(returningInterval);
  const rows = await runEventsQuery<{ person: string }[]>(
    ch,
    `SELECT person FROM (${perPerson(ch, input, params)})
      WHERE has(cohorts, ${c}) AND (${j} = 0 OR has(returns, ${c} + ${j}))
      ORDER BY person LIMIT ${params.number(limit + 1)} OFFSET ${params.number(offset)}`,
    params,
    'JSONEachRow',
  );
  return { personUuids: rows.slice(0, limit).map((r) => r.person), hasMore: rows.length > limit };
}

/**
 * PostHog's `display=ActionsTable` rows: the persons of cohort `cohort`, each with the intervals j
 * (0 = the cohort's own) in which they did the returning event; most such intervals first, then by
 * person (PostHog's `ORDER BY length(appearances) DESC, actor_id`).
 */
export async function retentionAppearances(
  ch: ClickHouse,
  input: RetentionInput,
  cohort: number,
  limit: number,
  offset: number,
): Promise<{ rows: { person: string; appearances: number[] }[]; hasMore: boolean }> {
  const params = new Params();
  const c = params.number(cohort);
  const n = params.number(input.starts.length);
  const rows = await runEventsQuery<{ person: string; appearances: number[] }[]>(
    ch,
    `SELECT person, arrayFilter(j -> j = 0 OR has(returns, ${c} + j), range(toUInt32(${n} - ${c}))) AS appearances
       FROM (${perPerson(ch, input, params)}) WHERE has(cohorts, ${c})
      ORDER BY length(appearances) DESC, person
      LIMIT ${params.number(limit + 1)} OFFSET ${params.number(offset)}`,
    params,
    'JSONEachRow',
  );
  return {
    rows: rows.slice(0, limit).map((r) => ({
      person: r.person,
      appearances: r.appearances.map(Number),
    })),
    hasMore: rows.length > limit,
  };
}
