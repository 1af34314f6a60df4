/**
 * The `properties` parameter of the events list → one SQL condition.
 *
 * Accepted: a JSON list of filters (all must hold), or a group `{type: "AND"|"OR", values: [...]}`
 * whose values are filters or groups. A filter is `{key, value, operator, type}`:
 * - `type` `event` (default): an event property, compared as PostHog's ClickHouse queries do: the
 *   property as text (JSON strings unquoted, numbers and booleans as their JSON text);
 * - `type` `hogql`: `key` is a HogQL condition, as in `where` (projections/hogql/eventsExpr.ts),
 *   parsed beforehand by `prepareHogQLFilters` (PostHog's parser answers asynchronously);
 * - `type` `person`: not compiled here. The route takes them out first (eventPersonFilters.ts:
 *   resolved against the persons read model in Postgres, then `has(ids, distinct_id)`); one that
 *   reaches this compiler is refused;
 * - every other type (cohort, group, element…): refused.
 * Operators (flags.md §3.3 names): exact (a list value means any of), is_not (none of; a missing
 * property matches), is_set, is_not_set, icontains, not_icontains, regex, not_regex (RE2 syntax),
 * gt, gte, lt, lte (numeric), is_date_before, is_date_after, is_date_exact (ISO or relative dates
 * like `-7d`; exact compares to the second).
 */

import { HogQLError } from '../hogql/errors.ts';
import { compileEventsCondition, HogQLInputError, parseEventsExpr } from '../hogql/eventsExpr.ts';
import { parseDateParam } from '../shared/dateParam.ts';
import {
  compileFilterTree,
  escapeLike,
  FilterError,
  filterNumber,
  filterText,
  isRecord,
  type Operator,
  operatorOf,
  requireValue,
} from '../shared/propertyFilterTree.ts';
import { dateTimeParamSql, type Params, propertySql } from './sqlParams.ts';

export { FilterError, OPERATORS } from '../shared/propertyFilterTree.ts';

/**
 * The SQL (or the refusal) of each `hogql` filter object, filled by `prepareHogQLFilters` before
 * the synchronous compile reads it; keyed by the filter object, so it lives as long as the request
 * holds its filters and no other request can evict it.
 */
const preparedHogQL = new WeakMap<object, { sql: string } | { refused: string }>();

/** Parses and compiles every `hogql` filter of the filter trees (lists, AND/OR groups, filters). */
export async function prepareHogQLFilters(...trees: unknown[]): Promise<void> {
  const filters: Record<string, unknown>[] = [];
  const visit = (node: unknown, depth: number) => {
    if (depth > 100) return; // compileFilterTree refuses deeper trees itself
    if (Array.isArray(node)) for (const n of node) visit(n, depth + 1);
    else if (isRecord(node)) {
      if (Array.isArray(node.values) && (node.type === 'AND' || node.type === 'OR'))
        visit(node.values, depth + 1);
      else if (node.type === 'hogql' && !preparedHogQL.has(node)) filters.push(node);
    }
  };
  for (const tree of trees) visit(tree, 0);
  for (const f of filters) {
    if (typeof f.key !== 'string' || f.key.trim() === '') {
      preparedHogQL.set(f, { refused: 'key must be a HogQL condition' });
      continue;
    }
    try {
      preparedHogQL.set(f, { sql: compileEventsCondition(await parseEventsExpr(f.key)) });
    } catch (error) {
      if (!(error instanceof HogQLInputError || error instanceof HogQLError)) throw error;
      preparedHogQL.set(f, { refused: error.message });
    }
  }
}

function eventFilter(f: Record<string, unknown>, path: string, params: Params, now: Date): string {
  const type = f.type ?? 'event';
  const key = f.key as string;
  if (type === 'hogql') {
    const prepared = preparedHogQL.get(f);
    if (!prepared) throw new Error(`${path}: a hogql filter compiled before prepareHogQLFilters`);
    if ('refused' in prepared) throw new FilterError(`${path}: ${prepared.refused}`);
    return prepared.sql;
  }
  if (type === 'person')
    throw new FilterError(
      `${path}: person property filters are resolved in Postgres before the event query (resolvePersonFilters); none may reach it`,
    );
  if (type !== 'event')
    throw new FilterError(
      `${path}: filters of type ${JSON.stringify(type)} are not supported; supported types: event, person, hogql`,
    );
  return operatorSql(
    operatorOf(f, path),
    propertySql([key], params),
    f.value,
    `${path}.value`,
    params,
    now,
  );
}

function operatorSql(
  operator: Operator,
  prop: string,
  value: unknown,
  where: string,
  p: Params,
  now: Date,
): string {
  if (operator !== 'is_set' && operator !== 'is_not_set') requireValue(value, where, operator);
  switch (operator) {
    case 'is_set':
      return `isNotNull(${prop})`;
    case 'is_not_set':
      return `isNull(${prop})`;
    case 'exact':
    case 'is_not': {
      const values = (Array.isArray(value) ? value : [value]).map((v) =>
        p.string(filterText(v, where)),
      );
      if (values.length === 0) throw new FilterError(`${where}: an empty list matches nothing`);
      return operator === 'exact'
        ? `ifNull(${prop} IN (${values.join(', ')}), 0)`
        : `ifNull(${prop} NOT IN (${values.join(', ')}), 1)`;
    }
    case 'icontains':
    case 'not_icontains': {
      const pattern = p.string(`%${escapeLike(filterText(value, where))}%`);
      return operator === 'icontains'
        ? `ifNull(ilike(${prop}, ${pattern}), 0)`
        : `ifNull(notILike(${prop}, ${pattern}), 1)`;
    }
    case 'regex':
    case 'not_regex': {
      const pattern = filterText(value, where);
      try {
        new RegExp(pattern);
      } catch {
        throw new FilterError(`${where}: invalid regular expression`);
      }
      return operator === 'regex'
        ? `ifNull(match(${prop}, ${p.string(pattern)}), 0)`
        : `ifNull(not(match(${prop}, ${p.string(pattern)})), 1)`;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const n = filterNumber(value, where, operator);
      const fn = { gt: 'greater', gte: 'greaterOrEquals', lt: 'less', lte: 'lessOrEquals' }[
        operator
      ];
      return `ifNull(${fn}(toFloat64OrNull(${prop}), ${p.add(n, 'Float64')}), 0)`;
    }
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact': {
      const date = typeof value === 'string' ? parseDateParam(value, now) : null;
      if (!date)
        throw new FilterError(
          `${where}: ${operator} needs an ISO 8601 date or a relative date like -7d`,
        );
      const left = `parseDateTime64BestEffortOrNull(${prop}, 6, 'UTC')`;
      const right = dateTimeParamSql(date, p);
      if (operator === 'is_date_exact')
        return `ifNull(toDateTime(${left}) = toDateTime(${right}), 0)`;
      return `ifNull(${operator === 'is_date_before' ? 'less' : 'greater'}(${left}, ${right}), 0)`;
    }
  }
}

/** The filters as one SQL condition over `events`, or null when there is nothing to filter. */
export function compilePropertyFilters(input: unknown, params: Params, now: Date): string | null {
  if (input === null || input === undefined) return null;
  if (Array.isArray(input) && input.length === 0) return null;
  if (isRecord(input) && Array.isArray(input.values) && input.values.length === 0) return null;
  return compileFilterTree(input, {
    leaf: (f, path) => eventFilter(f, path, params, now),
    // an empty group inside the tree holds for every event
    combine: (op, parts) =>
      parts.length === 0
        ? 'true'
        : parts.length === 1
          ? parts[0]!
          : `${op === 'AND' ? 'and' : 'or'}(${parts.join(', ')})`,
  });
}
