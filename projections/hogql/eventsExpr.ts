/**
 * HogQL expressions in the context of one `events` row: the events list's `select`, `where` and
 * `orderBy` items and the `hogql` property filter (events list, insights, action steps). Parsed by
 * PostHog's parser (parser.ts, in its thread) and printed by the compiler's printExpr, with
 * fields resolved to the bare columns of ClickHouse `events` (so the SQL fits every reader's
 * FROM, aliased or joined). docs/DECISIONS.md "The events list on the HogQL compiler".
 */
import { DomainFailure, invalidInput } from '../../src/core/errors.ts';
import { HogQLError } from './errors.ts';
import { identifier, jsonProperty } from './fields.ts';
import { knownFunction } from './functions.ts';
import { MAX_NESTING, type Node, nestingDepth, parseExpr } from './parser.ts';
import { type ExprHost, printExpr, spanOf } from './printExpr.ts';
import { NUMERIC_EVENT_PROPERTIES } from './schema.ts';

/** Items in one `select`, `where` or `orderBy` list. */
export const MAX_ITEMS = 50;
/** Characters in one expression. */
export const MAX_EXPRESSION_LENGTH = 4000;
/** Operators and calls on the longest path of one expression (ClickHouse stops at 1,000). */
export const MAX_DEPTH = 100;
/**
 * NOTs (or unary minuses) in a row: PostHog's parser takes time growing with the square of such
 * a run (measured: 20 in 0.3 s, 40 in 3 s, 100 in 19 s) and crashes at 300.
 */
export const MAX_PREFIX_RUN = 20;

/** A refused expression: 400 `invalid_input`, `attr` the parameter it came from. */
export class HogQLInputError extends DomainFailure {
  constructor(
    message: string,
    readonly attr: string | null = null,
  ) {
    super(invalidInput(message, attr));
    this.name = 'HogQLError';
  }
}

const COLUMNS: Readonly<Record<string, string>> = {
  event: 'event',
  timestamp: 'timestamp',
  distinct_id: 'distinct_id',
  uuid: 'uuid',
  // the person the event had when captured, as the events list always answered (no join)
  person_id: 'person_id',
  properties: 'properties',
  elements_chain: 'elements_chain',
  created_at: 'created_at',
  $group_0: '$group_0',
  $group_1: '$group_1',
  $group_2: '$group_2',
  $group_3: '$group_3',
  $group_4: '$group_4',
};
export const FIELD_NAMES = [...Object.keys(COLUMNS), 'properties.<key>'];
/** Where `person.properties.<key>` may stand (resolved in Postgres by queries/events/eventPersonFilters.ts). */
export const PERSON_PROPERTIES_WHERE =
  'in where only, as a condition of the top-level AND comparing person.properties.<key> with a constant: =, !=, <, <=, >, >=, [NOT] LIKE, [NOT] ILIKE, [NOT] IN (...), IS [NOT] NULL';

const quoted = (text: string) => (text.length > 80 ? `${text.slice(0, 60)}…` : text);

/** Runs `fn`, prefixing a refusal with the item it came from (`where "…": …`) and its parameter. */
export async function about<T>(what: string, text: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof HogQLInputError || error instanceof HogQLError)
      throw new HogQLInputError(`${what} "${quoted(text)}": ${error.message}`, what);
    throw error;
  }
}

export function checkItems(items: readonly string[], what: string): void {
  if (items.length > MAX_ITEMS)
    throw new HogQLInputError(`At most ${MAX_ITEMS} ${what} expressions are allowed`, what);
  for (const item of items) {
    if (item.length > MAX_EXPRESSION_LENGTH)
      throw new HogQLInputError(
        `A ${what} expression is longer than ${MAX_EXPRESSION_LENGTH} characters`,
        what,
      );
    if (item.trim() === '') throw new HogQLInputError(`Empty ${what} expression`, what);
  }
}

const tooDeep = (levels: number) =>
  new HogQLInputError(`the expression is nested more than ${levels} levels deep`);

/** The text's string literals and quoted names emptied, so that only its syntax is measured. */
const syntaxOf = (text: string) => text.replace(/'(?:[^'\\]|\\.|'')*'?|`(?:[^`\\]|\\.)*`?/g, "''");

/** Bounds checked before the parser sees the text (see MAX_PREFIX_RUN, parser.ts MAX_NESTING). */
function checkBeforeParse(text: string): void {
  if (text.length > MAX_EXPRESSION_LENGTH)
    throw new HogQLInputError(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  if (nestingDepth(text) > MAX_NESTING) throw tooDeep(MAX_NESTING);
  const syntax = syntaxOf(text);
  const run = new RegExp(`(?:(?:\\bnot\\b|-)[\\s(]*){${MAX_PREFIX_RUN + 1},}`, 'i');
  if (run.test(syntax)) throw tooDeep(MAX_PREFIX_RUN);
}

/** Operators and calls on the longest path of a parsed expression, without recursion. */
export function depthOf(root: Node): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[root, 0]];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const [value, depth] = item;
    if (Array.isArray(value)) {
      for (const v of value) pending.push([v, depth]);
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    const n = value as Node;
    const counts = typeof n.node === 'string' && n.node !== 'Constant' && n.node !== 'Field';
    const below = counts ? depth + 1 : depth;
    deepest = Math.max(deepest, below);
    for (const [key, child] of Object.entries(n))
      if (key !== 'start' && key !== 'end') pending.push([child, below]);
  }
  return deepest;
}

/** One expression parsed by PostHog's parser, within the bounds above. */
export async function parseEventsExpr(text: string): Promise<Node> {
  checkBeforeParse(text);
  const node = await parseExpr(text);
  if (depthOf(node) > MAX_DEPTH) throw tooDeep(MAX_DEPTH);
  return node;
}

export type CompiledExpr = Readonly<{
  sql: string;
  /** contains an aggregate call (outside subqueries) */
  aggregate: boolean;
  /** reads a column outside any aggregate */
  column: boolean;
}>;

const isPropertyField = (n: Node): boolean =>
  (n.node === 'Field' && n.chain?.[0] === 'properties' && n.chain.length > 1) ||
  (n.node === 'ArrayAccess' && isPropertyField(n.array));
const COMPARISONS = new Set(['==', '!=', '<', '<=', '>', '>=']);
const NEGATED = new Set(['!=', 'not like', 'not ilike', 'not in', 'global not in', '!~', '!~*']);

/**
 * The events list's reading of properties (kept from before the compiler): a property compared
 * with a number is read as a number, with true/false as 'true'/'false'; a comparison with a
 * missing property is false (true when negated: `!=`, NOT LIKE, NOT IN), never NULL.
 */
function typed(node: Node): Node {
  if (Array.isArray(node)) return node.map(typed) as unknown as Node;
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = k === 'start' || k === 'end' ? v : typed(v);
  const n = out as Node;
  if (n.node !== 'CompareOperation') return n;
  const sides = [n.left as Node, n.right as Node];
  const property = sides.findIndex(isPropertyField);
  if (property < 0) return n;
  const other = sides[1 - property]!;
  if (COMPARISONS.has(n.op) && other.node === 'Constant') {
    if (typeof other.value === 'number' || typeof other.value === 'bigint')
      sides[property] = { node: 'Call', name: 'toFloat', args: [sides[property]] };
    else if (typeof other.value === 'boolean')
      sides[1 - property] = { ...other, value: other.value ? 'true' : 'false' };
  }
  const compare = { ...n, left: sides[0], right: sides[1] };
  if (other.node === 'Constant' && other.value === null) return compare;
  return {
    node: 'Call',
    name: 'ifNull',
    args: [compare, { node: 'Constant', value: NEGATED.has(n.op) ? 1 : 0 }],
    start: n.start,
    end: n.end,
  };
}

/** Fields of an `events` row as its bare columns; no subqueries or placeholders here. */
const EVENTS_HOST: ExprHost = {
  field(node, lambdaArgs) {
    const chain = (node.chain ?? []).map(String) as string[];
    const [head, ...rest] = chain;
    const name = chain.join('.');
    if (head !== undefined && lambdaArgs.has(head)) return chain.map(identifier).join('.');
    if (head === 'properties' && rest.length > 0) {
      const text = jsonProperty('properties', rest);
      return rest.length === 1 && NUMERIC_EVENT_PROPERTIES.has(rest[0]!)
        ? `toFloat64OrNull(${text})`
        : text;
    }
    if (head === 'person' && rest[0] === 'properties')
      throw new HogQLError(
        `Unsupported use of "${name}": person properties are supported ${PERSON_PROPERTIES_WHERE}; not inside OR, NOT, functions or arithmetic, nor in select or orderBy`,
      );
    if (head === 'person' || head === 'pdi' || head === 'person_properties')
      throw new HogQLError(
        `Unsupported field "${name}": of the person, only person.properties.<key> is supported, ${PERSON_PROPERTIES_WHERE}`,
      );
    const column = rest.length === 0 && head !== undefined ? COLUMNS[head] : undefined;
    if (!column)
      throw new HogQLError(`Unknown field "${name}". Supported fields: ${FIELD_NAMES.join(', ')}`);
    return identifier(column);
  },
  subquery: (node) => {
    throw new HogQLError(
      'subqueries are not supported here; ask POST /api/projects/:id/query/ with a HogQLQuery',
      spanOf(node),
    );
  },
  placeholder: (node) => {
    throw new HogQLError('placeholders ({name}) are not supported here', spanOf(node));
  },
  inTarget: () => undefined,
};

/** Whether the expression aggregates and reads columns outside its aggregates. */
function facts(root: Node): { aggregate: boolean; column: boolean } {
  let aggregate = false;
  let column = false;
  const walk = (value: unknown, inAggregate: boolean, lambdaArgs: ReadonlySet<string>) => {
    if (Array.isArray(value)) {
      for (const v of value) walk(v, inAggregate, lambdaArgs);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const n = value as Node;
    if (n.node === 'SelectQuery' || n.node === 'SelectSetQuery') return;
    if (n.node === 'Field') {
      if (!inAggregate && !lambdaArgs.has(String(n.chain?.[0]))) column = true;
      return;
    }
    let inner = inAggregate;
    if (n.node === 'Call' && knownFunction(String(n.name))?.aggregate) {
      if (inAggregate)
        throw new HogQLError(
          `Aggregate "${n.name}" cannot be nested inside another aggregate`,
          spanOf(n),
        );
      aggregate = true;
      inner = true;
    }
    const args = n.node === 'Lambda' ? new Set([...lambdaArgs, ...(n.args ?? [])]) : lambdaArgs;
    for (const [key, child] of Object.entries(n))
      if (key !== 'start' && key !== 'end') walk(child, inner, args);
  };
  walk(root, false, new Set());
  return { aggregate, column };
}

/** A parsed expression as ClickHouse SQL over one `events` row. */
export function compileEventsExpr(node: Node): CompiledExpr {
  return { sql: printExpr(EVENTS_HOST, typed(node)), ...facts(node) };
}

/** A `where` item or `hogql` filter: a condition, without aggregates. */
export function compileEventsCondition(node: Node): string {
  const c = compileEventsExpr(node);
  if (c.aggregate) throw new HogQLError('aggregates are not allowed in where');
  return c.sql;
}
