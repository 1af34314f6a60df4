/**
 * The `select`, `where` and `orderBy` parameters of the events list, compiled to SQL pieces by the
 * HogQL compiler (projections/hogql/eventsExpr.ts). Aggregates in `select` group by every
 * non-aggregate select item, as PostHog's events query does.
 */

import {
  about,
  type CompiledExpr,
  checkItems,
  compileEventsCondition,
  compileEventsExpr,
  HogQLInputError,
  parseEventsExpr,
} from '../hogql/eventsExpr.ts';
import type { Node } from '../hogql/parser.ts';

export type CompiledSelect = Readonly<{
  /** response column names: the select items as given, or their alias */
  columns: string[];
  items: CompiledExpr[];
  aggregate: boolean;
  /** SQL of the non-aggregate items that read columns, when `aggregate` */
  groupBy: string[];
}>;

export type OrderItem = Readonly<{
  sql: string;
  desc: boolean;
  /** the item is exactly `timestamp` */
  timestamp: boolean;
}>;

/**
 * A `where` item already parsed: `expr` is what is left of the item once the person conditions
 * (queries/events/eventPersonFilters.ts) were taken out of its top-level AND; null when nothing is.
 */
export type WhereItem = Readonly<{ text: string; expr: Node | null }>;

export async function compileSelect(items: readonly string[]): Promise<CompiledSelect> {
  checkItems(items, 'select');
  if (items.length === 0)
    throw new HogQLInputError('select needs at least one expression', 'select');
  const columns: string[] = [];
  const compiled: CompiledExpr[] = [];
  for (const text of items) {
    compiled.push(
      await about('select', text, async () => {
        if (text.trim() === '*') throw new HogQLInputError('"*" is not supported; name the fields');
        const node = await parseEventsExpr(text);
        const aliased = node.node === 'Alias' && !node.hidden;
        const c = compileEventsExpr(aliased ? node.expr : node);
        if (c.aggregate && c.column)
          throw new HogQLInputError('mixes aggregate and non-aggregate parts of the row');
        columns.push(aliased ? String(node.alias) : text.trim());
        return c;
      }),
    );
  }
  const aggregate = compiled.some((c) => c.aggregate);
  return {
    columns,
    items: compiled,
    aggregate,
    groupBy: aggregate ? compiled.filter((c) => c.column).map((c) => c.sql) : [],
  };
}

/** Parses `where` items (person conditions stay in: the caller takes them out first, if at all). */
export async function parseWhere(items: readonly string[]): Promise<WhereItem[]> {
  checkItems(items, 'where');
  const out: WhereItem[] = [];
  for (const text of items)
    out.push({ text, expr: await about('where', text, () => parseEventsExpr(text)) });
  return out;
}

/** `where` items: conditions without aggregates, all of which must hold. */
export async function compileWhere(
  items: readonly string[] | readonly WhereItem[],
): Promise<string[]> {
  const parsed = items.every((i): i is string => typeof i === 'string')
    ? await parseWhere(items)
    : (items as readonly WhereItem[]);
  const out: string[] = [];
  for (const { text, expr } of parsed)
    if (expr !== null) out.push(await about('where', text, () => compileEventsCondition(expr)));
  return out;
}

/**
 * `orderBy` items: `-expr` or `expr [ASC|DESC]`. A bare name may also be a select alias or repeat
 * a select item. With aggregates, each item must be an aggregate or one of the grouped items.
 */
export async function compileOrderBy(
  items: readonly string[],
  select?: CompiledSelect,
): Promise<OrderItem[]> {
  checkItems(items, 'orderBy');
  const out: OrderItem[] = [];
  for (const text of items) {
    out.push(
      await about('orderBy', text, async () => {
        const trimmed = text.trim();
        const desc = trimmed.startsWith('-') || /\s+desc$/i.test(trimmed);
        const bare = trimmed
          .replace(/^-/, '')
          .replace(/\s+(asc|desc)$/i, '')
          .trim();
        const byColumn = select?.columns.indexOf(bare) ?? -1;
        const c =
          byColumn >= 0 ? select!.items[byColumn]! : compileEventsExpr(await parseEventsExpr(bare));
        if (c.aggregate && !select?.aggregate)
          throw new HogQLInputError('aggregates in orderBy need an aggregate select');
        if (select?.aggregate && c.column && !select.groupBy.includes(c.sql)) {
          throw new HogQLInputError(
            'with aggregates, orderBy must be an aggregate or one of the non-aggregate select expressions',
          );
        }
        return { sql: c.sql, desc, timestamp: byColumn < 0 && bare === 'timestamp' };
      }),
    );
  }
  return out;
}
