/**
 * The `properties` parameter of the persons list → one Postgres condition over `p.properties` (jsonb).
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
import { parseDateParam } from '../events/eventCursor.ts';

export class FilterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FilterError';
  }
}

/** Positional bind parameters for one statement. */
export class PgParams {
  readonly values: unknown[] = [];
  add(value: unknown, cast: string): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }
}

export const OPERATORS = [
  'exact', 'is_not', 'is_set', 'is_not_set', 'icontains', 'not_icontains', 'regex', 'not_regex',
  'gt', 'gte', 'lt', 'lte', 'is_date_before', 'is_date_after', 'is_date_exact',
] as const;
type Operator = (typeof OPERATORS)[number];

const MAX_DEPTH = 10;
const MAX_FILTERS = 100;

const NUMBER = String.raw`^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$`;
const DATE = String.raw`^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?\s*(Z|[+-]\d{2}(:?\d{2})?)?)?$`;
const WITH_OFFSET = String.raw`[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?\s*(Z|[+-]\d{2}(:?\d{2})?)$`;

/** The property as a number, or NULL when it does not read as one (never an error). */
const numberSql = (t: string) => `(CASE WHEN ${t} ~ '${NUMBER}' THEN (${t})::numeric END)`;
/** The property as a timestamptz (UTC when it carries no offset), or NULL. */
const dateSql = (t: string) =>
  `(CASE WHEN ${t} ~ '${WITH_OFFSET}' AND pg_input_is_valid(${t}, 'timestamptz') THEN (${t})::timestamptz
         WHEN ${t} ~ '${DATE}' AND pg_input_is_valid(${t}, 'timestamp') THEN (${t})::timestamp AT TIME ZONE 'UTC' END)`;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A scalar filter value as the text properties are compared with. */
function text(value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  throw new FilterError(`${where}: value must be a string, number or boolean`);
}

/** `%`, `_` and `\` taken literally in a LIKE pattern (backslash is Postgres' default escape). */
export const escapeLike = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/** parseDateParam's text (offset optional, UTC when absent) → an ISO instant. */
function dateValue(value: unknown, now: Date): string | null {
  const parsed = typeof value === 'string' ? parseDateParam(value, now) : null;
  if (!parsed) return null;
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(parsed);
  if (!m) return null;
  const offset = !m[3] || m[3] === 'Z' ? 'Z' : m[3].length === 3 ? `${m[3]}:00` : m[3].includes(':') ? m[3] : `${m[3].slice(0, 3)}:${m[3].slice(3)}`;
  const at = new Date(`${m[1]}T${m[2] ?? '00:00'}${m[2] && m[2].length === 5 ? ':00' : ''}${offset}`);
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
}

export type CompiledFilters = { sql: string; regexes: string[] };

class FilterCompiler {
  private count = 0;
  readonly regexes: string[] = [];
  constructor(
    private readonly params: PgParams,
    private readonly now: Date,
    private readonly column: string,
  ) {}

  node(node: unknown, depth: number, path: string): string | null {
    if (depth > MAX_DEPTH) throw new FilterError(`properties: groups nested deeper than ${MAX_DEPTH}`);
    if (Array.isArray(node)) return this.group('AND', node, depth, path);
    if (!isRecord(node)) throw new FilterError(`${path}: expected a filter object or a group`);
    if ((node.type === 'AND' || node.type === 'OR') && 'values' in node) {
      if (!Array.isArray(node.values)) throw new FilterError(`${path}.values: expected a list`);
      return this.group(node.type, node.values, depth, `${path}.values`);
    }
    return this.filter(node, path);
  }

  /** null: nothing in the group restricts persons (an empty group, or only non-person filters). */
  private group(op: 'AND' | 'OR', items: unknown[], depth: number, path: string): string | null {
    const parts = items.map((item, i) => this.node(item, depth + 1, `${path}[${i}]`)).filter((p): p is string => p !== null);
    if (parts.length === 0) return null;
    return parts.length === 1 ? parts[0]! : `(${parts.join(op === 'AND' ? ' AND ' : ' OR ')})`;
  }

  private filter(f: Record<string, unknown>, path: string): string | null {
    if (++this.count > MAX_FILTERS) throw new FilterError(`properties: more than ${MAX_FILTERS} filters`);
    if (typeof f.key !== 'string' || f.key === '') throw new FilterError(`${path}.key: a non-empty string is required`);
    if (f.type !== undefined && f.type !== null && f.type !== 'person') return null;
    const operator = (f.operator ?? 'exact') as Operator;
    if (!OPERATORS.includes(operator)) {
      throw new FilterError(`${path}.operator: ${JSON.stringify(f.operator)} is not supported; supported operators: ${OPERATORS.join(', ')}`);
    }
    return this.operator(operator, `(${this.column} ->> ${this.params.add(f.key, 'text')})`, f.value, path);
  }

  private operator(operator: Operator, prop: string, value: unknown, path: string): string {
    const p = this.params;
    const where = `${path}.value`;
    const required = () => {
      if (value === undefined || value === null) throw new FilterError(`${where}: a value is required for ${operator}`);
    };
    switch (operator) {
      case 'is_set':
        return `${prop} IS NOT NULL`;
      case 'is_not_set':
        return `${prop} IS NULL`;
      case 'exact':
      case 'is_not': {
        required();
        const values = (Array.isArray(value) ? value : [value]).map((v) => text(v, where));
        if (values.length === 0) throw new FilterError(`${where}: an empty list matches nothing`);
        const list = p.add(values, 'text[]');
        return operator === 'exact' ? `COALESCE(${prop} = ANY(${list}), false)` : `COALESCE(${prop} <> ALL(${list}), true)`;
      }
      case 'icontains':
      case 'not_icontains': {
        required();
        const pattern = p.add(`%${escapeLike(text(value, where))}%`, 'text');
        return operator === 'icontains' ? `COALESCE(${prop} ILIKE ${pattern}, false)` : `COALESCE(${prop} NOT ILIKE ${pattern}, true)`;
      }
      case 'regex':
      case 'not_regex': {
        required();
        const pattern = text(value, where);
        this.regexes.push(pattern);
        const param = p.add(pattern, 'text');
        return operator === 'regex' ? `COALESCE(${prop} ~ ${param}, false)` : `COALESCE(${prop} !~ ${param}, true)`;
      }
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        required();
        const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
        if (!Number.isFinite(n)) throw new FilterError(`${where}: ${operator} needs a number`);
        const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[operator];
        return `COALESCE(${numberSql(prop)} ${op} ${p.add(String(n), 'numeric')}, false)`;
      }
      case 'is_date_before':
      case 'is_date_after':
      case 'is_date_exact': {
        required();
        const date = dateValue(value, this.now);
        if (!date) throw new FilterError(`${where}: ${operator} needs an ISO 8601 date or a relative date like -7d`);
        const right = p.add(date, 'timestamptz');
        if (operator === 'is_date_exact') return `COALESCE(date_trunc('second', ${dateSql(prop)}) = date_trunc('second', ${right}), false)`;
        return `COALESCE(${dateSql(prop)} ${operator === 'is_date_before' ? '<' : '>'} ${right}, false)`;
      }
    }
  }
}

/**
 * The filters as one SQL condition over `column` (a jsonb expression), or null when nothing restricts.
 * `regexes` lists the patterns used, for the caller to check before running the statement.
 */
export function compilePersonFilters(input: unknown, params: PgParams, now: Date, column = 'p.properties'): CompiledFilters | null {
  if (input === null || input === undefined) return null;
  const compiler = new FilterCompiler(params, now, column);
  const sql = compiler.node(input, 0, 'properties');
  return sql === null ? null : { sql, regexes: compiler.regexes };
}
