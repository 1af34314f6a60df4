/**
 * The `properties` parameter of the events list → one SQL condition.
 *
 * Accepted: a JSON list of filters (all must hold), or a group `{type: "AND"|"OR", values: [...]}`
 * whose values are filters or groups. A filter is `{key, value, operator, type}`:
 * - `type` `event` (default): an event property, compared as PostHog's ClickHouse queries do: the
 *   property as text (JSON strings unquoted, numbers and booleans as their JSON text);
 * - `type` `hogql`: `key` is a HogQL condition (the `where` subset);
 * - `type` `person`: not compiled here. The route takes them out first (eventPersonFilters.ts:
 *   resolved against the persons read model in Postgres, then `has(ids, distinct_id)`); one that
 *   reaches this compiler is refused;
 * - every other type (cohort, group, element…): refused.
 * Operators (flags.md §3.3 names): exact (a list value means any of), is_not (none of; a missing
 * property matches), is_set, is_not_set, icontains, not_icontains, regex, not_regex (RE2 syntax),
 * gt, gte, lt, lte (numeric), is_date_before, is_date_after, is_date_exact (ISO or relative dates
 * like `-7d`; exact compares to the second).
 */
import { parseDateParam } from './eventCursor.ts';
import { compileCondition } from './hogqlQuery.ts';
import { HogQLError } from './hogqlTokenizer.ts';
import { dateTimeParamSql, escapeLike, type Params, propertySql } from './sqlParams.ts';

export class FilterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FilterError';
  }
}

export const OPERATORS = [
  'exact', 'is_not', 'is_set', 'is_not_set', 'icontains', 'not_icontains', 'regex', 'not_regex',
  'gt', 'gte', 'lt', 'lte', 'is_date_before', 'is_date_after', 'is_date_exact',
] as const;
type Operator = (typeof OPERATORS)[number];

const MAX_DEPTH = 10;
const MAX_FILTERS = 100;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A scalar filter value as the text properties are compared with. */
function text(value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  throw new FilterError(`${where}: value must be a string, number or boolean`);
}

class FilterCompiler {
  private count = 0;
  constructor(
    private readonly params: Params,
    private readonly now: Date,
  ) {}

  node(node: unknown, depth: number, path: string): string {
    if (depth > MAX_DEPTH) throw new FilterError(`properties: groups nested deeper than ${MAX_DEPTH}`);
    if (Array.isArray(node)) return this.group('AND', node, depth, path);
    if (!isRecord(node)) throw new FilterError(`${path}: expected a filter object or a group`);
    if ((node.type === 'AND' || node.type === 'OR') && 'values' in node) {
      if (!Array.isArray(node.values)) throw new FilterError(`${path}.values: expected a list`);
      return this.group(node.type, node.values, depth, `${path}.values`);
    }
    return this.filter(node, path);
  }

  private group(op: 'AND' | 'OR', items: unknown[], depth: number, path: string): string {
    const parts = items.map((item, i) => this.node(item, depth + 1, `${path}[${i}]`));
    if (parts.length === 0) return 'true';
    if (parts.length === 1) return parts[0]!;
    return `${op === 'AND' ? 'and' : 'or'}(${parts.join(', ')})`;
  }

  private filter(f: Record<string, unknown>, path: string): string {
    if (++this.count > MAX_FILTERS) throw new FilterError(`properties: more than ${MAX_FILTERS} filters`);
    const type = f.type ?? 'event';
    if (typeof f.key !== 'string' || f.key === '') throw new FilterError(`${path}.key: a non-empty string is required`);
    if (type === 'hogql') {
      try {
        return compileCondition(f.key, this.params);
      } catch (error) {
        if (error instanceof HogQLError) throw new FilterError(`${path}: ${error.message}`);
        throw error;
      }
    }
    if (type === 'person') throw new FilterError(`${path}: person property filters are resolved in Postgres before the event query (resolvePersonFilters); none may reach it`);
    if (type !== 'event') throw new FilterError(`${path}: filters of type ${JSON.stringify(type)} are not supported; supported types: event, person, hogql`);
    const operator = (f.operator ?? 'exact') as Operator;
    if (!OPERATORS.includes(operator)) {
      throw new FilterError(`${path}.operator: ${JSON.stringify(f.operator)} is not supported; supported operators: ${OPERATORS.join(', ')}`);
    }
    return this.operator(operator, propertySql([f.key], this.params), f.value, path);
  }

  private operator(operator: Operator, prop: string, value: unknown, path: string): string {
    const p = this.params;
    const where = `${path}.value`;
    const required = () => {
      if (value === undefined || value === null) throw new FilterError(`${where}: a value is required for ${operator}`);
    };
    switch (operator) {
      case 'is_set':
        return `isNotNull(${prop})`;
      case 'is_not_set':
        return `isNull(${prop})`;
      case 'exact':
      case 'is_not': {
        required();
        const values = (Array.isArray(value) ? value : [value]).map((v) => p.string(text(v, where)));
        if (values.length === 0) throw new FilterError(`${where}: an empty list matches nothing`);
        return operator === 'exact' ? `ifNull(${prop} IN (${values.join(', ')}), 0)` : `ifNull(${prop} NOT IN (${values.join(', ')}), 1)`;
      }
      case 'icontains':
      case 'not_icontains': {
        required();
        const pattern = p.string(`%${escapeLike(text(value, where))}%`);
        return operator === 'icontains' ? `ifNull(ilike(${prop}, ${pattern}), 0)` : `ifNull(notILike(${prop}, ${pattern}), 1)`;
      }
      case 'regex':
      case 'not_regex': {
        required();
        const pattern = text(value, where);
        try {
          new RegExp(pattern);
        } catch {
          throw new FilterError(`${where}: invalid regular expression`);
        }
        return operator === 'regex' ? `ifNull(match(${prop}, ${p.string(pattern)}), 0)` : `ifNull(not(match(${prop}, ${p.string(pattern)})), 1)`;
      }
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        required();
        const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
        if (!Number.isFinite(n)) throw new FilterError(`${where}: ${operator} needs a number`);
        const fn = { gt: 'greater', gte: 'greaterOrEquals', lt: 'less', lte: 'lessOrEquals' }[operator];
        return `ifNull(${fn}(toFloat64OrNull(${prop}), ${p.add(n, 'Float64')}), 0)`;
      }
      case 'is_date_before':
      case 'is_date_after':
      case 'is_date_exact': {
        required();
        const date = typeof value === 'string' ? parseDateParam(value, this.now) : null;
        if (!date) throw new FilterError(`${where}: ${operator} needs an ISO 8601 date or a relative date like -7d`);
        const left = `parseDateTime64BestEffortOrNull(${prop}, 6, 'UTC')`;
        const right = dateTimeParamSql(date, p);
        if (operator === 'is_date_exact') return `ifNull(toDateTime(${left}) = toDateTime(${right}), 0)`;
        return `ifNull(${operator === 'is_date_before' ? 'less' : 'greater'}(${left}, ${right}), 0)`;
      }
    }
  }
}

/** The filters as one SQL condition over `events`, or null when there is nothing to filter. */
export function compilePropertyFilters(input: unknown, params: Params, now: Date): string | null {
  if (input === null || input === undefined) return null;
  if (Array.isArray(input) && input.length === 0) return null;
  if (isRecord(input) && Array.isArray(input.values) && input.values.length === 0) return null;
  return new FilterCompiler(params, now).node(input, 0, 'properties');
}
