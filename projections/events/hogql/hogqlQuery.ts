/**
 * The `select`, `where` and `orderBy` parameters of the events list, compiled to SQL pieces.
 * Aggregates in `select` group by every non-aggregate select item, as PostHog's events query does.
 */

import type { Params } from '../sqlParams.ts';
import { type Compiled, ExprCompiler } from './hogqlCompiler.ts';
import {
  type Expr,
  MAX_EXPRESSION_LENGTH,
  parseExpr,
  parseOrderItem,
  parseSelectItem,
} from './hogqlParser.ts';
import { HogQLError } from './hogqlTokenizer.ts';

export { MAX_DEPTH, MAX_EXPRESSION_LENGTH } from './hogqlParser.ts';
export const MAX_ITEMS = 50;

export type CompiledSelect = Readonly<{
  /** response column names: the select items as given, or their alias */
  columns: string[];
  items: Compiled[];
  aggregate: boolean;
  /** SQL of the non-aggregate items that read columns, when `aggregate` */
  groupBy: string[];
}>;

export type OrderItem = Readonly<{
  sql: string;
  desc: boolean /** the item is exactly `timestamp` */;
  timestamp: boolean;
}>;

export function checkItems(items: readonly string[], what: string): void {
  if (items.length > MAX_ITEMS)
    throw new HogQLError(`At most ${MAX_ITEMS} ${what} expressions are allowed`, what);
  for (const item of items) {
    if (item.length > MAX_EXPRESSION_LENGTH)
      throw new HogQLError(
        `A ${what} expression is longer than ${MAX_EXPRESSION_LENGTH} characters`,
        what,
      );
    if (item.trim() === '') throw new HogQLError(`Empty ${what} expression`, what);
  }
}

/** The expression as an error quotes it: its start when it is long (600 NOTs say little). */
const quoted = (text: string) => (text.length > 80 ? `${text.slice(0, 60)}…` : text);

/** Runs `fn`, prefixing a HogQL error with the expression it came from. */
export function about<T>(what: string, text: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof HogQLError)
      throw new HogQLError(`${what} "${quoted(text)}": ${error.message}`, what);
    throw error;
  }
}

export function compileSelect(items: readonly string[], params: Params): CompiledSelect {
  checkItems(items, 'select');
  if (items.length === 0) throw new HogQLError('select needs at least one expression', 'select');
  const compiler = new ExprCompiler(params);
  const columns: string[] = [];
  const compiled = items.map((text) =>
    about('select', text, () => {
      if (text.trim() === '*') throw new HogQLError('"*" is not supported; name the fields');
      const { expr, alias } = parseSelectItem(text);
      const c = compiler.compile(expr);
      if (c.aggregate && c.column)
        throw new HogQLError('mixes aggregate and non-aggregate parts of the row');
      columns.push(alias ?? text.trim());
      return c;
    }),
  );
  const aggregate = compiled.some((c) => c.aggregate);
  return {
    columns,
    items: compiled,
    aggregate,
    groupBy: aggregate ? compiled.filter((c) => c.column).map((c) => c.sql) : [],
  };
}

/**
 * A `where` item already parsed: `expr` is what is left of the item once the person conditions
 * (eventPersonFilters.ts) were taken out of its top-level AND; `null` when nothing is left.
 */
export type WhereItem = Readonly<{ text: string; expr: Expr | null }>;

/** `where` items: conditions without aggregates, all of which must hold. */
export function compileWhere(
  items: readonly string[] | readonly WhereItem[],
  params: Params,
): string[] {
  let parsed: readonly WhereItem[];
  if (items.every((i): i is string => typeof i === 'string')) {
    checkItems(items, 'where');
    parsed = items.map((text) => ({ text, expr: about('where', text, () => parseExpr(text)) }));
  } else {
    parsed = items as readonly WhereItem[];
  }
  const compiler = new ExprCompiler(params);
  return parsed.flatMap(({ text, expr }) =>
    expr === null
      ? []
      : [
          about('where', text, () => {
            const c = compiler.condition(expr);
            if (c.aggregate) throw new HogQLError('aggregates are not allowed in where');
            return c.sql;
          }),
        ],
  );
}

/** One condition (a `hogql` property filter). */
export const compileCondition = (text: string, params: Params): string =>
  compileWhere([text], params)[0]!;

const isTimestamp = (e: Expr) =>
  e.kind === 'field' && e.chain.length === 1 && e.chain[0] === 'timestamp';

/**
 * `orderBy` items: `-expr` or `expr [ASC|DESC]`. A bare name may also be a select alias or repeat
 * a select item. With aggregates, each item must be an aggregate or one of the grouped items.
 */
export function compileOrderBy(
  items: readonly string[],
  params: Params,
  select?: CompiledSelect,
): OrderItem[] {
  checkItems(items, 'orderBy');
  const compiler = new ExprCompiler(params);
  return items.map((text) =>
    about('orderBy', text, () => {
      const { expr, desc } = parseOrderItem(text);
      const name = expr.kind === 'field' && expr.chain.length === 1 ? expr.chain[0]! : undefined;
      const bare = text
        .trim()
        .replace(/^-/, '')
        .replace(/\s+(asc|desc)$/i, '')
        .trim();
      const byColumn = select?.columns.findIndex((c) => c === name || c === bare) ?? -1;
      const c = byColumn >= 0 ? select!.items[byColumn]! : compiler.compile(expr);
      if (c.aggregate && !select?.aggregate)
        throw new HogQLError('aggregates in orderBy need an aggregate select');
      if (select?.aggregate && c.column && !select.groupBy.includes(c.sql)) {
        throw new HogQLError(
          'with aggregates, orderBy must be an aggregate or one of the non-aggregate select expressions',
        );
      }
      return { sql: c.sql, desc, timestamp: byColumn < 0 && isTimestamp(expr) };
    }),
  );
}
