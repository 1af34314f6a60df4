/**
 * The persons list's WHERE clause (`personWhere`), and its `properties` parameter → one Postgres
 * condition over `p.properties` (jsonb). SQL builders of the persons reader (`personsReader.ts`).
 *
 * Accepted: a JSON list of filters (all must hold), or a group `{type: "AND"|"OR", values: [...]}`
 * whose values are filters or groups. A filter is `{key, value, operator, type}`. Only person
 * filters restrict persons (capture.md §4.1): `type` `person`, or no type at all; filters of any
 * other type (event, cohort, group…) are ignored, as PostHog's persons list ignores them.
 *
 * A property is compared as text, like the events list does: JSON strings unquoted, numbers and
 * booleans as their JSON text, JSON null and a missing key as NULL. Operators (flags.md §3.3 names):
 * exact (case-sensitive; a list value means any of), is_not (none of; a missing property matches),
 * is_set / is_not_set (JSON null counts as not set), icontains / not_icontains (case-insensitive
 * substring; not_… matches a missing property), regex / not_regex (Postgres regular expressions),
 * gt, gte, lt, lte (numeric: properties that do not read as a number never match), is_date_before,
 * is_date_after (strict), is_date_exact (to the second); dates are ISO 8601 or relative like `-7d`,
 * a property date without an offset is UTC.
 *
 * Every user value and every key travels as a bind parameter (`properties ->> $n::text`); the SQL
 * text is built only from our own fragments.
 */
import { isUuid } from '../../src/core/uuid.ts';
import { parseDateParam } from '../shared/dateParam.ts';
import {
  compileFilterTree,
  escapeLike,
  FilterError,
  filterNumber,
  filterText,
  type Operator,
  operatorOf,
  requireValue,
} from '../shared/propertyFilterTree.ts';

/** Positional bind parameters for one statement. */
export class PgParams {
  readonly values: unknown[] = [];
  add(value: unknown, cast: string): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }
}

const NUMBER = String.raw`^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$`;
const DATE = String.raw`^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?\s*(Z|[+-]\d{2}(:?\d{2})?)?)?$`;
const WITH_OFFSET = String.raw`[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?\s*(Z|[+-]\d{2}(:?\d{2})?)$`;

/** The property as a number, or NULL when it does not read as one (never an error). */
const numberSql = (t: string) => `(CASE WHEN ${t} ~ '${NUMBER}' THEN (${t})::numeric END)`;
/** The property as a timestamptz (UTC when it carries no offset), or NULL. */
const dateSql = (t: string) =>
  `(CASE WHEN ${t} ~ '${WITH_OFFSET}' AND pg_input_is_valid(${t}, 'timestamptz') THEN (${t})::timestamptz
         WHEN ${t} ~ '${DATE}' AND pg_input_is_valid(${t}, 'timestamp') THEN (${t})::timestamp AT TIME ZONE 'UTC' END)`;

/** parseDateParam's text (offset optional, UTC when absent) → an ISO instant. */
function dateValue(value: unknown, now: Date): string | null {
  const parsed = typeof value === 'string' ? parseDateParam(value, now) : null;
  if (!parsed) return null;
  const m =
    /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(
      parsed,
    );
  if (!m) return null;
  const offset =
    !m[3] || m[3] === 'Z'
      ? 'Z'
      : m[3].length === 3
        ? `${m[3]}:00`
        : m[3].includes(':')
          ? m[3]
          : `${m[3].slice(0, 3)}:${m[3].slice(3)}`;
  const at = new Date(
    `${m[1]}T${m[2] ?? '00:00'}${m[2] && m[2].length === 5 ? ':00' : ''}${offset}`,
  );
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
}

export type CompiledFilters = { sql: string; regexes: string[] };

function personFilter(
  f: Record<string, unknown>,
  path: string,
  column: string,
  p: PgParams,
  now: Date,
  regexes: string[],
): string | null {
  if (f.type !== undefined && f.type !== null && f.type !== 'person') return null;
  const operator = operatorOf(f, path);
  return operatorSql(
    operator,
    `(${column} ->> ${p.add(f.key, 'text')})`,
    f.value,
    `${path}.value`,
    p,
    now,
    regexes,
  );
}

function operatorSql(
  operator: Operator,
  prop: string,
  value: unknown,
  where: string,
  p: PgParams,
  now: Date,
  regexes: string[],
): string {
  if (operator !== 'is_set' && operator !== 'is_not_set') requireValue(value, where, operator);
  switch (operator) {
    case 'is_set':
      return `${prop} IS NOT NULL`;
    case 'is_not_set':
      return `${prop} IS NULL`;
    case 'exact':
    case 'is_not': {
      const values = (Array.isArray(value) ? value : [value]).map((v) => filterText(v, where));
      if (values.length === 0) throw new FilterError(`${where}: an empty list matches nothing`);
      const list = p.add(values, 'text[]');
      return operator === 'exact'
        ? `COALESCE(${prop} = ANY(${list}), false)`
        : `COALESCE(${prop} <> ALL(${list}), true)`;
    }
    case 'icontains':
    case 'not_icontains': {
      const pattern = p.add(`%${escapeLike(filterText(value, where))}%`, 'text');
      return operator === 'icontains'
        ? `COALESCE(${prop} ILIKE ${pattern}, false)`
        : `COALESCE(${prop} NOT ILIKE ${pattern}, true)`;
    }
    case 'regex':
    case 'not_regex': {
      const pattern = filterText(value, where);
      regexes.push(pattern);
      const param = p.add(pattern, 'text');
      return operator === 'regex'
        ? `COALESCE(${prop} ~ ${param}, false)`
        : `COALESCE(${prop} !~ ${param}, true)`;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const n = filterNumber(value, where, operator);
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[operator];
      return `COALESCE(${numberSql(prop)} ${op} ${p.add(String(n), 'numeric')}, false)`;
    }
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact': {
      const date = dateValue(value, now);
      if (!date)
        throw new FilterError(
          `${where}: ${operator} needs an ISO 8601 date or a relative date like -7d`,
        );
      const right = p.add(date, 'timestamptz');
      if (operator === 'is_date_exact')
        return `COALESCE(date_trunc('second', ${dateSql(prop)}) = date_trunc('second', ${right}), false)`;
      return `COALESCE(${dateSql(prop)} ${operator === 'is_date_before' ? '<' : '>'} ${right}, false)`;
    }
  }
}

/**
 * The filters as one SQL condition over `column` (a jsonb expression), or null when nothing restricts.
 * `regexes` lists the patterns used, for the caller to check before running the statement.
 */
export function compilePersonFilters(
  input: unknown,
  params: PgParams,
  now: Date,
  column = 'p.properties',
): CompiledFilters | null {
  if (input === null || input === undefined) return null;
  const regexes: string[] = [];
  const sql = compileFilterTree(input, {
    leaf: (f, path) => personFilter(f, path, column, params, now, regexes),
    // null: nothing in the group restricts persons (an empty group, or only non-person filters)
    combine: (op, parts) =>
      parts.length === 0
        ? null
        : parts.length === 1
          ? parts[0]!
          : `(${parts.join(op === 'AND' ? ' AND ' : ' OR ')})`,
  });
  return sql === null ? null : { sql, regexes };
}

export type PersonListInput = Readonly<{
  projectId: number;
  now: Date;
  distinctId?: string | undefined;
  email?: string | undefined;
  search?: string | undefined;
  /** the parsed `properties` parameter */
  properties?: unknown;
  /** only the persons this cohort holds (a static cohort's, a dynamic one's last calculation) */
  cohortId?: number | undefined;
}>;

/** The WHERE clause of the persons list, with its parameters (persons alias `p`). */
export type PersonWhere = { sql: string; params: PgParams; regexes: string[] };

const distinctIdOwner = (params: PgParams, projectParam: string, distinctId: string) =>
  `p.id = (SELECT d.person_id FROM person_distinct_ids d WHERE d.project_id = ${projectParam} AND d.distinct_id = ${params.add(distinctId, 'text')})`;

/**
 * capture.md §4.1 filters: project, not created more than a day in the future, distinct_id (owner of
 * that id), email (exact on properties.email), search (email substring, case-insensitive, or exact
 * distinct id, or exact uuid), properties (person property filters), cohort (its members). Pure: a filter error is thrown
 * here, before anything is read.
 */
export function personWhere(input: PersonListInput): PersonWhere {
  const params = new PgParams();
  const project = params.add(input.projectId, 'int');
  const parts = [
    `p.project_id = ${project}`,
    `p.created_at <= ${params.add(input.now.toISOString(), 'timestamptz')} + interval '1 day'`,
  ];
  if (input.distinctId !== undefined)
    parts.push(distinctIdOwner(params, project, input.distinctId));
  if (input.email !== undefined)
    parts.push(`(p.properties ->> 'email') = ${params.add(input.email, 'text')}`);
  if (input.search !== undefined && input.search !== '') {
    const any = [
      `COALESCE((p.properties ->> 'email') ILIKE ${params.add(`%${escapeLike(input.search)}%`, 'text')}, false)`,
      distinctIdOwner(params, project, input.search),
    ];
    if (isUuid(input.search))
      any.push(`p.uuid = ${params.add(input.search.toLowerCase(), 'uuid')}`);
    parts.push(`(${any.join(' OR ')})`);
  }
  // The cohorts read model's member table, read here across folders (as PostHog's persons list
  // joins cohortpeople): one statement, however many members the cohort has.
  if (input.cohortId !== undefined)
    parts.push(
      `p.uuid IN (SELECT cp.person_uuid FROM cohort_people cp WHERE cp.cohort_id = ${params.add(input.cohortId, 'int')})`,
    );
  const filters = compilePersonFilters(input.properties, params, input.now);
  if (filters) parts.push(filters.sql);
  return { sql: parts.join(' AND '), params, regexes: filters?.regexes ?? [] };
}
