import { DomainFailure, invalidInput } from '../../src/core/errors.ts';

/**
 * What the events list (ClickHouse) and the persons list (Postgres) share of PostHog's `properties`
 * parameter: the tree — a JSON list of filters (all must hold), or `{type: "AND"|"OR", values}`
 * groups nested at most 10 deep with at most 100 filters — the operator names (flags.md §3.3) and
 * the checks on filter values. Each list supplies only its SQL dialect.
 */
export class FilterError extends DomainFailure {
  constructor(message: string) {
    super(invalidInput(message, 'properties'));
    this.name = 'FilterError';
  }
}

export const OPERATORS = [
  'exact',
  'is_not',
  'is_set',
  'is_not_set',
  'icontains',
  'not_icontains',
  'regex',
  'not_regex',
  'gt',
  'gte',
  'lt',
  'lte',
  'is_date_before',
  'is_date_after',
  'is_date_exact',
] as const;
export type Operator = (typeof OPERATORS)[number];

export const MAX_DEPTH = 10;
export const MAX_FILTERS = 100;

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `%`, `_` and `\` taken literally in a LIKE pattern (backslash is the escape in both stores). */
export const escapeLike = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A scalar filter value as the text properties are compared with. */
export function filterText(value: unknown, where: string): string {
  if (typeof value === 'string') {
    // Neither store can compare with NUL (Postgres text cannot hold it).
    if (value.includes('\0')) throw new FilterError(`${where}: NUL characters are not allowed`);
    return value;
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  throw new FilterError(`${where}: value must be a string, number or boolean`);
}

export function requireValue(value: unknown, where: string, operator: Operator): void {
  if (value === undefined || value === null)
    throw new FilterError(`${where}: a value is required for ${operator}`);
}

/** The number a gt/gte/lt/lte filter compares with. */
export function filterNumber(value: unknown, where: string, operator: Operator): number {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && value.trim() !== ''
        ? Number(value)
        : Number.NaN;
  if (!Number.isFinite(n)) throw new FilterError(`${where}: ${operator} needs a number`);
  return n;
}

/** The filter's operator (default `exact`), refused when it is not one of OPERATORS. */
export function operatorOf(f: Record<string, unknown>, path: string): Operator {
  const operator = (f.operator ?? 'exact') as Operator;
  if (!OPERATORS.includes(operator)) {
    throw new FilterError(
      `${path}.operator: ${JSON.stringify(f.operator)} is not supported; supported operators: ${OPERATORS.join(', ')}`,
    );
  }
  return operator;
}

export type FilterDialect = Readonly<{
  /** one filter (its `key` already checked) → a condition, or null when it restricts nothing here */
  leaf: (filter: Record<string, unknown>, path: string) => string | null;
  /** the conditions of a group (nulls removed) → one condition, or null */
  combine: (op: 'AND' | 'OR', parts: string[]) => string | null;
}>;

/** Walks the tree under the shared limits and builds one condition with the dialect. */
export function compileFilterTree(input: unknown, dialect: FilterDialect): string | null {
  let count = 0;
  const node = (n: unknown, depth: number, path: string): string | null => {
    if (depth > MAX_DEPTH)
      throw new FilterError(`properties: groups nested deeper than ${MAX_DEPTH}`);
    if (Array.isArray(n)) return group('AND', n, depth, path);
    if (!isRecord(n)) throw new FilterError(`${path}: expected a filter object or a group`);
    if ((n.type === 'AND' || n.type === 'OR') && 'values' in n) {
      if (!Array.isArray(n.values)) throw new FilterError(`${path}.values: expected a list`);
      return group(n.type, n.values, depth, `${path}.values`);
    }
    if (++count > MAX_FILTERS)
      throw new FilterError(`properties: more than ${MAX_FILTERS} filters`);
    if (typeof n.key !== 'string' || n.key === '')
      throw new FilterError(`${path}.key: a non-empty string is required`);
    if (n.key.includes('\0')) throw new FilterError(`${path}.key: NUL characters are not allowed`);
    return dialect.leaf(n, path);
  };
  const group = (op: 'AND' | 'OR', items: unknown[], depth: number, path: string) =>
    dialect.combine(
      op,
      items
        .map((item, i) => node(item, depth + 1, `${path}[${i}]`))
        .filter((p): p is string => p !== null),
    );
  return node(input, 0, 'properties');
}
