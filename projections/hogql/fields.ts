import { HogQLError, type Span } from './errors.ts';
import {
  NUMERIC_EVENT_PROPERTIES,
  PDI_DISTINCT_ID,
  PERSON_CREATED_AT,
  PERSON_ID,
  PERSON_IS_IDENTIFIED,
  PERSON_PROPERTIES,
  TABLES,
  type TableName,
} from './schema.ts';
import type { Needs } from './tables.ts';

/** A ClickHouse identifier: bare when it may be, else in backticks with `\` and `` ` `` escaped. */
export const identifier = (name: string): string =>
  /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)
    ? name
    : `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;

/** A ClickHouse string literal; every string of a query is printed through here, never raw. */
export const stringLiteral = (value: string): string =>
  `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * A property of a JSON text column, as PostHog prints it: the raw JSON value, '' and JSON null
 * read as NULL, a string's quotes removed (so numbers read as their text).
 */
export const jsonProperty = (column: string, path: readonly (string | number)[]): string =>
  `replaceRegexpAll(nullIf(nullIf(JSONExtractRaw(${column}${path
    .map((k) => `, ${typeof k === 'number' ? String(k) : stringLiteral(k)}`)
    .join('')}), ''), 'null'), '^"|"$', '')`;

/** A table in a SELECT's FROM: one of HogQL's (scoped, with lazy joins) or a subquery/CTE. */
export type TableRef =
  | { kind: 'table'; alias: string; table: TableName; needs: Needs }
  | { kind: 'other'; alias: string };

/** The lazy `person` of a table with a person id: its fields as the scoped source names them. */
function personField(
  ref: TableRef & { kind: 'table' },
  rest: readonly string[],
  span: Span,
): string {
  const a = identifier(ref.alias);
  const [name, ...path] = rest;
  ref.needs.personId = true;
  if (name === 'id' && path.length === 0) return `${a}.${PERSON_ID}`;
  ref.needs.person = true;
  if (name === 'properties')
    return path.length === 0
      ? `${a}.${PERSON_PROPERTIES}`
      : jsonProperty(`${a}.${PERSON_PROPERTIES}`, path);
  if (name === 'created_at' && path.length === 0) return `${a}.${PERSON_CREATED_AT}`;
  if (name === 'is_identified' && path.length === 0) return `${a}.${PERSON_IS_IDENTIFIED}`;
  throw new HogQLError(`Field not found: person.${rest.join('.')}`, span);
}

/** `chain` (after the table's alias, if any) on a HogQL table, as ClickHouse SQL. */
export function tableField(
  ref: TableRef & { kind: 'table' },
  chain: readonly string[],
  span: Span,
): string {
  const [name, ...rest] = chain;
  const field = name === undefined ? undefined : TABLES[ref.table][name];
  if (!name || !field)
    throw new HogQLError(
      `Field not found: ${chain.join('.') || '(none)'} on table ${ref.table}`,
      span,
    );
  const a = identifier(ref.alias);
  if (field.type === 'json') {
    if (rest.length === 0) return `${a}.${identifier(name)}`;
    const text = jsonProperty(`${a}.${identifier(name)}`, rest);
    return ref.table === 'events' && rest.length === 1 && NUMERIC_EVENT_PROPERTIES.has(rest[0]!)
      ? `toFloat64OrNull(${text})`
      : text;
  }
  if (field.type === 'lazy_table') {
    if (field.table === 'persons') return personField(ref, rest, span);
    const [sub, ...after] = rest;
    // persons.pdi: a row of each of the person's distinct ids
    if (ref.table === 'persons') {
      if (sub === 'person_id' && after.length === 0) return `${a}.id`;
      if (sub !== 'distinct_id' || after.length > 0)
        throw new HogQLError(`Field not found: ${chain.join('.')} on table persons`, span);
      ref.needs.pdi = true;
      return `${a}.${PDI_DISTINCT_ID}`;
    }
    // events.pdi: the distinct id's row of person_distinct_ids
    if (sub === 'distinct_id' && after.length === 0) return `${a}.distinct_id`;
    if (sub === 'person_id' && after.length === 0) {
      ref.needs.personId = true;
      return `${a}.${PERSON_ID}`;
    }
    if (sub === 'person') return personField(ref, after, span);
    throw new HogQLError(`Field not found: ${chain.join('.')} on table ${ref.table}`, span);
  }
  if (rest.length > 0)
    throw new HogQLError(`${name} of ${ref.table} has no field ${rest.join('.')}`, span);
  if (field.column === PERSON_ID) ref.needs.personId = true;
  return `${a}.${identifier(field.column ?? name)}`;
}
