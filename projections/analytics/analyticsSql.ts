/**
 * What the analytics readers share: the series' conditions over `events`, the person of an event
 * after merges (through `person_distinct_id`), and interval buckets in UTC.
 */
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { type CompiledActionStep, compileActionSteps } from '../events/actionStepsSql.ts';
import type { PersonIdSet } from '../events/eventsReader.ts';
import { compilePropertyFilters } from '../events/propertyFilters.ts';
import { dateTimeParamSql, type Params, propertySql } from '../events/sqlParams.ts';

export type Interval = 'hour' | 'day' | 'week' | 'month';

/** One series: an event (null: every event) in [from, to), with its filters. */
export type SeriesInput = Readonly<{
  projectId: number;
  now: Date;
  event: string | null;
  /** an action series: events matching any of its steps (none: every event, as PostHog) */
  actionSteps?: readonly CompiledActionStep[];
  /** ISO instants, from inclusive, to exclusive */
  from: string;
  to: string;
  /** event property filters (person filters already resolved into `personIdSets`) */
  properties: unknown;
  personIdSets: readonly PersonIdSet[];
}>;

/**
 * A breakdown: an event property (`key`), or with `persons` a person property, whose value per
 * person (after merges) was read from the persons read model.
 */
export type Breakdown = Readonly<{
  key: string;
  persons?: Readonly<{ uuids: readonly string[]; values: readonly string[] }>;
}>;

/** PostHog's breakdown value of the series that sums the values past the breakdown limit. */
export const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$';
/** the values a breakdown keeps when the request names no limit (PostHog's default) */
export const DEFAULT_BREAKDOWN_LIMIT = 25;

/** Bucket start of `ts` (weeks start on Sunday, PostHog's default `week_start_day`). */
export function bucketSql(interval: Interval, ts = 'e.timestamp'): string {
  switch (interval) {
    case 'hour':
      return `toStartOfHour(${ts})`;
    case 'day':
      return `toStartOfDay(${ts})`;
    case 'week':
      return `toDateTime(toStartOfWeek(${ts}, 0), 'UTC')`;
    case 'month':
      return `toDateTime(toStartOfMonth(${ts}), 'UTC')`;
  }
}

/**
 * `events e` joined to the person each distinct id belongs to now: `person` is the merged
 * person's uuid (an id no merge touched keeps the person it had at capture); events of deleted
 * persons are left out.
 */
export function eventsWithPersons(ch: ClickHouse, params: Params, projectId: number): string {
  const team = params.number(projectId);
  return `${ch.database}.events AS e
    LEFT JOIN (
      SELECT distinct_id AS pdi_distinct_id, argMax(person_id, version) AS merged,
             argMax(is_deleted, version) AS deleted
        FROM ${ch.database}.person_distinct_id WHERE team_id = ${team} GROUP BY distinct_id
    ) AS pdi ON pdi.pdi_distinct_id = e.distinct_id`;
}

export const PERSON_SQL = `if(pdi.pdi_distinct_id = '', e.person_id, pdi.merged)`;

/** The series' WHERE conditions (alias `e`); `fromSql` replaces the range's start. */
export function seriesConditions(input: SeriesInput, params: Params, fromSql?: string): string[] {
  const out = [
    `e.team_id = ${params.number(input.projectId)}`,
    `e.timestamp >= ${fromSql ?? dateTimeParamSql(input.from, params)}`,
    `e.timestamp < ${dateTimeParamSql(input.to, params)}`,
    `pdi.deleted = 0`,
  ];
  if (input.event !== null) out.push(`e.event = ${params.string(input.event)}`);
  if (input.actionSteps) out.push(compileActionSteps(input.actionSteps, params, input.now));
  for (const set of input.personIdSets) {
    const has = `has(${params.strings(set.ids)}, e.distinct_id)`;
    out.push(set.negated ? `not(${has})` : has);
  }
  const filters = compilePropertyFilters(input.properties, params, input.now);
  // unqualified columns (properties, timestamp, event) are the events table's: the joined
  // subquery names its own columns apart
  if (filters) out.push(filters);
  return out;
}

/**
 * A breakdown's value as text ('' when the event, or the event's person, lacks the property: as
 * PostHog's "none"). A person property is looked up by the event's person after merges.
 */
export function breakdownSql(b: Breakdown, params: Params): string {
  if (!b.persons) return `ifNull(${propertySql([b.key], params)}, '')`;
  if (b.persons.uuids.length === 0) return `''`;
  return `transform(toString(${PERSON_SQL}), ${params.strings(b.persons.uuids)}, ${params.strings(b.persons.values)}, '')`;
}
