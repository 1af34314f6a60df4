import { parseDateParam } from '../shared/dateParam.ts';
import {
  compileFilterTree,
  FilterError,
  filterNumber,
  filterText,
  isRecord,
  type Operator,
  operatorOf,
  requireValue,
} from '../shared/propertyFilterTree.ts';

/**
 * PostHog's property filters (`[{key, value, operator, type}]` or AND/OR groups) and HogQLFilters
 * (`dateRange` + `properties`) as one HogQL boolean expression, the text `/query` hands the
 * compiler for `{filters}` and EventsQuery/ActorsQuery add to their WHERE. HogQL text rather than
 * SQL: the compiler then scopes, types and checks it like any expression a user writes, so a
 * filter can reach nothing a query could not.
 */

/** Where the filters apply: event rows (person.properties…), or person rows (properties…). */
export type FilterScope = 'events' | 'persons';

export const FILTER_TYPES = ['event', 'person', 'cohort', 'group', 'element', 'hogql'] as const;

/** A HogQL string literal: backslash escapes, as PostHog's printer writes them. */
export function hogqlString(value: string): string {
  const escaped = value.replace(
    /[\\'\n\r\t]/g,
    (c) => ({ '\\': '\\\\', "'": "\\'", '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c]!,
  );
  return `'${escaped}'`;
}

/** One field chain element: bare when HogQL reads it as an identifier, else in backticks. */
export function hogqlIdentifier(name: string): string {
  if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name)) return name;
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '``')}\``;
}

const property = (prefix: string, key: string) => `${prefix}.${hogqlIdentifier(key)}`;

const LIST_OPERATORS = new Set<Operator>(['exact', 'is_not']);

/** A comparison of a property (text, as captured properties are read) with the filter's value. */
function compare(field: string, operator: Operator, value: unknown, where: string): string {
  switch (operator) {
    case 'is_set':
      return `${field} IS NOT NULL`;
    case 'is_not_set':
      return `${field} IS NULL`;
    default:
      requireValue(value, where, operator);
  }
  if (Array.isArray(value)) {
    if (!LIST_OPERATORS.has(operator))
      throw new FilterError(`${where}: ${operator} takes one value, not a list`);
    if (value.length === 0) throw new FilterError(`${where}: the list of values is empty`);
    const list = value.map((v, i) => hogqlString(filterText(v, `${where}.value[${i}]`))).join(', ');
    return operator === 'exact'
      ? `toString(${field}) IN (${list})`
      : `(${field} IS NULL OR toString(${field}) NOT IN (${list}))`;
  }
  const text = () => hogqlString(filterText(value, `${where}.value`));
  const like = () => hogqlString(`%${filterText(value, `${where}.value`)}%`);
  switch (operator) {
    case 'exact':
      return `toString(${field}) = ${text()}`;
    case 'is_not':
      return `(${field} IS NULL OR toString(${field}) != ${text()})`;
    case 'icontains':
      return `toString(${field}) ILIKE ${like()}`;
    case 'not_icontains':
      return `(${field} IS NULL OR toString(${field}) NOT ILIKE ${like()})`;
    case 'regex':
      return `match(toString(${field}), ${text()})`;
    case 'not_regex':
      return `(${field} IS NULL OR NOT match(toString(${field}), ${text()}))`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const symbol = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[operator];
      return `toFloat(${field}) ${symbol} ${filterNumber(value, where, operator)}`;
    }
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact': {
      const date = parseDateParam(filterText(value, `${where}.value`), new Date());
      if (!date) throw new FilterError(`${where}.value: expected a date (ISO 8601 or like -7d)`);
      const symbol = { is_date_before: '<', is_date_after: '>', is_date_exact: '=' }[operator];
      return `toDateTime(toString(${field})) ${symbol} toDateTime(${hogqlString(date)})`;
    }
  }
}

const ELEMENT_KEYS = ['tag_name', 'text', 'href'] as const;

/** A regex over the elements chain (PostHog's `elements_chain` text) for one element attribute. */
function elementCondition(f: Record<string, unknown>, operator: Operator, where: string): string {
  const key = f.key as string;
  if (!(ELEMENT_KEYS as readonly string[]).includes(key))
    throw new FilterError(
      `${where}.key: element filters take ${ELEMENT_KEYS.join(', ')}; ${JSON.stringify(key)} is not supported`,
    );
  if (operator !== 'exact' && operator !== 'is_not')
    throw new FilterError(`${where}.operator: element filters take exact or is_not`);
  requireValue(f.value, where, operator);
  const values = (Array.isArray(f.value) ? f.value : [f.value]).map((v, i) =>
    filterText(v, `${where}.value[${i}]`).replace(/[.*+?^${}()|[\]\\"]/g, '\\$&'),
  );
  const alternatives = `(${values.join('|')})`;
  const pattern =
    key === 'tag_name'
      ? `(^|;)${alternatives}([.:;]|$)`
      : `(^|;)[^;]*${key === 'text' ? 'text' : 'href'}="${alternatives}"`;
  const test = `match(elements_chain, ${hogqlString(pattern)})`;
  return operator === 'exact' ? test : `NOT ${test}`;
}

function cohortId(f: Record<string, unknown>, where: string): number {
  const id = typeof f.value === 'string' ? Number(f.value) : f.value;
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 0)
    throw new FilterError(`${where}.value: a cohort filter's value is the cohort's id`);
  return id;
}

function leaf(scope: FilterScope) {
  return (f: Record<string, unknown>, where: string): string | null => {
    const type = (f.type ?? 'event') as string;
    const key = f.key as string;
    const operator = type === 'cohort' || type === 'hogql' ? 'exact' : operatorOf(f, where);
    switch (type) {
      case 'event':
        if (scope === 'persons')
          throw new FilterError(`${where}.type: event filters do not apply to persons`);
        return compare(property('properties', key), operator, f.value, where);
      case 'person':
        return compare(
          property(scope === 'events' ? 'person.properties' : 'properties', key),
          operator,
          f.value,
          where,
        );
      case 'cohort': {
        const inCohort = `${scope === 'events' ? 'person_id' : 'id'} IN (SELECT person_id FROM cohort_people WHERE cohort_id = ${cohortId(f, where)})`;
        return f.operator === 'not_in' ? `NOT (${inCohort})` : inCohort;
      }
      case 'group': {
        if (scope === 'persons')
          throw new FilterError(`${where}.type: group filters do not apply to persons`);
        const index = f.group_type_index;
        if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > 4)
          throw new FilterError(`${where}.group_type_index: an integer from 0 to 4 is required`);
        return `$group_${index} IN (SELECT key FROM groups WHERE index = ${index} AND ${compare(property('properties', key), operator, f.value, where)})`;
      }
      case 'element':
        if (scope === 'persons')
          throw new FilterError(`${where}.type: element filters do not apply to persons`);
        return elementCondition(f, operator, where);
      case 'hogql':
        // the key is itself a HogQL expression; the compiler parses and checks it
        return `(${key})`;
      default:
        throw new FilterError(
          `${where}.type: ${JSON.stringify(type)} is not supported; supported types: ${FILTER_TYPES.join(', ')}`,
        );
    }
  };
}

/** PostHog's property filters as one HogQL condition, or null when they restrict nothing. */
export function propertyFiltersHogQL(properties: unknown, scope: FilterScope): string | null {
  if (properties === undefined || properties === null) return null;
  return compileFilterTree(properties, {
    leaf: leaf(scope),
    combine: (op, parts) =>
      parts.length === 0
        ? null
        : parts.length === 1
          ? parts[0]!
          : `(${parts.map((p) => `(${p})`).join(` ${op} `)})`,
  });
}

/** `dateRange.date_from`/`date_to` as PostHog reads them (ISO or relative; "all" is no bound). */
export function dateBound(raw: unknown, name: string, now: Date): string | null {
  if (raw === undefined || raw === null || raw === 'all') return null;
  const parsed = typeof raw === 'string' ? parseDateParam(raw, now) : null;
  if (!parsed)
    throw new FilterError(
      `filters.dateRange.${name}: expected an ISO 8601 date or a relative date like -7d`,
    );
  return parsed;
}

/**
 * PostHog's HogQLFilters (`{dateRange: {date_from, date_to}, properties}`) as the condition that
 * replaces `{filters}`: `timestamp >= from AND timestamp < to AND <properties>` (filters.py's
 * order: to, from, properties), or undefined when nothing is set (`{filters}` is then true).
 */
export function hogqlFiltersExpr(filters: unknown, now: Date): string | undefined {
  if (filters === undefined || filters === null) return undefined;
  if (!isRecord(filters)) throw new FilterError('filters: expected an object');
  const range = filters.dateRange;
  if (range !== undefined && range !== null && !isRecord(range))
    throw new FilterError('filters.dateRange: expected {date_from, date_to}');
  const parts: string[] = [];
  const to = dateBound(range?.date_to, 'date_to', now);
  if (to) parts.push(`timestamp < toDateTime(${hogqlString(to)})`);
  const from = dateBound(range?.date_from, 'date_from', now);
  if (from) parts.push(`timestamp >= toDateTime(${hogqlString(from)})`);
  const props = propertyFiltersHogQL(filters.properties, 'events');
  if (props) parts.push(props);
  if (parts.length === 0) return undefined;
  return parts.length === 1 ? parts[0] : parts.map((p) => `(${p})`).join(' AND ');
}
