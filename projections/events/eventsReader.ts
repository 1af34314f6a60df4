/**
 * The only reader of the ClickHouse `events` table (written by eventsProjection.ts), for the events
 * REST API. Every statement is built from fixed SQL text and `Params` placeholders; the only
 * interpolated names are the configured database and the table.
 */
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { clickHouseQueryError } from '../../src/runtime/clickhouseErrors.ts';
import { HogQLInputError } from '../hogql/eventsExpr.ts';
import { escapeLike } from '../shared/propertyFilterTree.ts';
import { type CompiledActionStep, compileActionSteps } from './actionStepsSql.ts';
import {
  type CompiledSelect,
  compileOrderBy,
  compileSelect,
  compileWhere,
  type OrderItem,
  type WhereItem,
} from './eventsHogQL.ts';
import { compilePropertyFilters, prepareHogQLFilters } from './propertyFilters.ts';
import { dateTimeParamSql, Params, propertySql } from './sqlParams.ts';

/** The columns an event row is read with (aliases that shadow no column of `events`). */
export const EVENT_COLUMNS_SQL =
  'toString(uuid) AS _id, distinct_id AS _distinct_id, properties AS _properties, event AS _event, toString(timestamp) AS _ts, elements_chain AS _elements_chain';

export type EventRow = {
  _id: string;
  _distinct_id: string;
  _properties: string;
  _event: string;
  _ts: string;
  _elements_chain: string;
};

/** ClickHouse `DateTime64(6, 'UTC')` text → PostHog's `2023-09-15T09:15:02.325000+00:00`. */
export function formatTimestamp(clickhouseText: string): string {
  return `${clickhouseText.replace(' ', 'T')}+00:00`;
}

/** A ClickHouse value of a select column → JSON: date-times (DateTime64 or DateTime, as toStartOfDay answers) in the event timestamp format. */
export function selectValue(value: unknown, clickhouseType: string): unknown {
  if (typeof value === 'string' && /^(Nullable\()?DateTime(64)?\b/.test(clickhouseType))
    return formatTimestamp(value);
  return value;
}

/** `has(ids, distinct_id)`, or `not(has(ids, distinct_id))` when `negated`: a person condition resolved to distinct ids. */
export type PersonIdSet = Readonly<{ ids: readonly string[]; negated: boolean }>;

export type ListInput = Readonly<{
  projectId: number;
  now: Date;
  /** dates already validated by `parseDateParam` */
  after?: string;
  before?: string;
  afterUuid?: string;
  beforeUuid?: string;
  distinctId?: string;
  event?: string;
  /** the distinct ids of the person asked for (resolved from the persons read model) */
  personDistinctIds?: readonly string[];
  properties?: unknown;
  /** an action's steps: events matching any (none match when there is none) */
  actionSteps?: readonly CompiledActionStep[];
  /** person conditions resolved in Postgres (queries/events/eventPersonFilters.ts): each restricts `distinct_id` */
  personIdSets?: readonly PersonIdSet[];
  select?: readonly string[];
  /** HogQL conditions, or items already parsed (person conditions taken out) */
  where?: readonly string[] | readonly WhereItem[];
  orderBy?: readonly string[];
  limit: number;
  offset: number;
  /** a page is read in parts of at most this many bytes of event data (at least one event each) */
  maxBytes?: number;
}>;

/** How the next page is reached: after the last row's timestamp, or by offset. */
export type Paging =
  | { kind: 'cursor'; descending: boolean; last: { timestamp: string; uuid: string } | null }
  | { kind: 'offset' };

export type ListResult =
  | {
      kind: 'events';
      /** the page's first part */
      rows: EventRow[];
      /** the page's further parts, read one at a time by `readPagePart` (a page over `maxBytes`) */
      rest: PagePart[];
      more: boolean;
      paging: Paging;
    }
  | {
      kind: 'select';
      columns: string[];
      types: string[];
      results: unknown[][];
      more: boolean;
      paging: Paging;
    };

export const QUERY_TIMEOUT_SECONDS = 60;
/** Memory one events or analytics query may use (the embedded ClickHouse shares the process). */
export const QUERY_MAX_MEMORY_BYTES = 2 * 1024 ** 3;
/**
 * Rows one events or analytics query may return: a backstop behind each reader's own bounds
 * (pages, top-N breakdowns, the interval cap); past it ClickHouse stops the query
 * (TOO_MANY_ROWS_OR_BYTES, a 400) before the server holds the rows.
 */
export const QUERY_MAX_RESULT_ROWS = 1_000_000;

export async function runEventsQuery<T>(
  ch: ClickHouse,
  query: string,
  params: Params,
  format: 'JSONEachRow' | 'JSONCompact',
): Promise<T> {
  try {
    const result = await ch.client.query({
      query,
      query_params: params.values,
      format,
      // a user's expression must not hold the server: long queries end with TIMEOUT_EXCEEDED (a 400 below)
      clickhouse_settings: {
        output_format_json_quote_64bit_integers: 0,
        max_execution_time: QUERY_TIMEOUT_SECONDS,
        max_memory_usage: String(QUERY_MAX_MEMORY_BYTES),
        max_result_rows: String(QUERY_MAX_RESULT_ROWS),
        result_overflow_mode: 'throw',
      },
    });
    return (await result.json()) as T;
  } catch (error) {
    // what the user's expressions or filters made ClickHouse refuse is a 400 naming the error
    // (src/runtime/clickhouseErrors.ts); an outage stays a 503 and anything else a 500
    const refused = clickHouseQueryError(error);
    if (refused)
      throw new HogQLInputError(`The query could not run (${refused.type}): ${refused.message}`);
    throw error;
  }
}

const table = (ch: ClickHouse) => `${ch.database}.events`;

async function conditions(input: ListInput, params: Params): Promise<string[]> {
  // the `hogql` filters are parsed first (PostHog's parser answers asynchronously)
  await prepareHogQLFilters(
    input.properties,
    ...(input.actionSteps ?? []).map((s) => s.properties),
  );
  const out = [`team_id = ${params.number(input.projectId)}`];
  if (input.after !== undefined) {
    const at = dateTimeParamSql(input.after, params);
    out.push(
      input.afterUuid
        ? `(timestamp, uuid) > (${at}, toUUID(${params.string(input.afterUuid)}))`
        : `timestamp > ${at}`,
    );
  }
  if (input.before !== undefined) {
    const at = dateTimeParamSql(input.before, params);
    out.push(
      input.beforeUuid
        ? `(timestamp, uuid) < (${at}, toUUID(${params.string(input.beforeUuid)}))`
        : `timestamp < ${at}`,
    );
  }
  if (input.distinctId !== undefined) out.push(`distinct_id = ${params.string(input.distinctId)}`);
  if (input.event !== undefined) out.push(`event = ${params.string(input.event)}`);
  if (input.personDistinctIds !== undefined) {
    out.push(
      input.personDistinctIds.length === 0
        ? '0'
        : `distinct_id IN (${input.personDistinctIds.map((d) => params.string(d)).join(', ')})`,
    );
  }
  for (const set of input.personIdSets ?? []) {
    const has = `has(${params.strings(set.ids)}, distinct_id)`;
    out.push(set.negated ? `not(${has})` : has);
  }
  const filters = compilePropertyFilters(input.properties, params, input.now);
  if (filters) out.push(filters);
  if (input.actionSteps)
    out.push(
      input.actionSteps.length === 0
        ? '0'
        : compileActionSteps(input.actionSteps, params, input.now),
    );
  if (input.where) out.push(...(await compileWhere(input.where)));
  return out;
}

/** ORDER BY, and whether the list pages with the timestamp cursor. */
function ordering(
  order: OrderItem[],
  select: CompiledSelect | undefined,
): { sql: string; paging: Paging } {
  const only = order.length === 1 ? order[0]! : undefined;
  if (!select?.aggregate && only?.timestamp) {
    const dir = only.desc ? 'DESC' : 'ASC';
    return {
      sql: `timestamp ${dir}, uuid ${dir}`,
      paging: { kind: 'cursor', descending: only.desc, last: null },
    };
  }
  const items = order.map((o) => `${o.sql} ${o.desc ? 'DESC' : 'ASC'}`);
  // a total order, so that offsets never skip or repeat rows
  if (select?.aggregate) items.push(...select.groupBy.map((g) => `${g} ASC`));
  else items.push('timestamp DESC', 'uuid DESC');
  return { sql: items.join(', '), paging: { kind: 'offset' } };
}

export async function listEvents(ch: ClickHouse, input: ListInput): Promise<ListResult> {
  const params = new Params();
  const select = input.select ? await compileSelect(input.select) : undefined;
  const where = (await conditions(input, params)).join(' AND ');
  let order: OrderItem[];
  if (input.orderBy && input.orderBy.length > 0)
    order = await compileOrderBy(input.orderBy, select);
  else if (select?.aggregate) {
    const first = select.items.findIndex((c) => c.aggregate);
    order = [{ sql: select.items[first]!.sql, desc: true, timestamp: false }];
  } else order = [{ sql: 'timestamp', desc: true, timestamp: true }];
  const { sql: orderSql, paging } = ordering(order, select);
  const page = `LIMIT ${params.number(input.limit + 1)} OFFSET ${params.number(input.offset)}`;

  if (!select) {
    const parts = await pageParts(ch, where, orderSql, page, params, input);
    const last = parts.at(-1)?.rows.at(-1);
    if (paging.kind === 'cursor' && last)
      paging.last = { timestamp: formatTimestamp(last._ts), uuid: last._id };
    const [first, ...rest] = parts;
    return {
      kind: 'events',
      rows: first ? await readPagePart(ch, input.projectId, first) : [],
      rest,
      more: parts.more,
      paging,
    };
  }

  const cursorColumns =
    paging.kind === 'cursor'
      ? ', toString(timestamp) AS _cursor_ts, toString(uuid) AS _cursor_id'
      : '';
  const groupBy =
    select.aggregate && select.groupBy.length > 0 ? ` GROUP BY ${select.groupBy.join(', ')}` : '';
  const query = `SELECT ${select.items.map((c, i) => `${c.sql} AS _c${i}`).join(', ')}${cursorColumns} FROM ${table(ch)} WHERE ${where}${groupBy} ORDER BY ${orderSql} ${page}`;
  const { meta, data } = await runEventsQuery<{
    meta: { name: string; type: string }[];
    data: unknown[][];
  }>(ch, query, params, 'JSONCompact');
  const width = select.items.length;
  const rows = data.slice(0, input.limit);
  const last = rows.at(-1);
  if (paging.kind === 'cursor' && last && rows.length === input.limit) {
    paging.last = {
      timestamp: selectValue(last[width], 'DateTime64') as string,
      uuid: last[width + 1] as string,
    };
  }
  return {
    kind: 'select',
    columns: select.columns,
    types: meta.slice(0, width).map((m) => m.type),
    results: rows.map((row) => row.slice(0, width).map((v, i) => selectValue(v, meta[i]!.type))),
    more: data.length > input.limit,
    paging,
  };
}

export async function getEvent(
  ch: ClickHouse,
  projectId: number,
  uuid: string,
): Promise<EventRow | null> {
  const params = new Params();
  const rows = await runEventsQuery<EventRow[]>(
    ch,
    `SELECT ${EVENT_COLUMNS_SQL} FROM ${table(ch)} WHERE team_id = ${params.number(projectId)} AND uuid = toUUID(${params.string(uuid)}) LIMIT 1`,
    params,
    'JSONEachRow',
  );
  return rows[0] ?? null;
}

/**
 * Distinct values of an event property, most frequent first (ties by value); `value` keeps those
 * containing it (case-insensitive); `eventNames` restricts to those events.
 */
export async function propertyValues(
  ch: ClickHouse,
  input: Readonly<{
    projectId: number;
    key: string;
    value?: string;
    eventNames?: readonly string[];
    limit: number;
  }>,
): Promise<string[]> {
  const params = new Params();
  const inner = [`team_id = ${params.number(input.projectId)}`];
  if (input.eventNames && input.eventNames.length > 0)
    inner.push(`event IN (${input.eventNames.map((e) => params.string(e)).join(', ')})`);
  const outer = ['isNotNull(_v)'];
  if (input.value) outer.push(`ilike(_v, ${params.string(`%${escapeLike(input.value)}%`)})`);
  const rows = await runEventsQuery<{ _v: string }[]>(
    ch,
    `SELECT _v FROM (SELECT ${propertySql([input.key], params)} AS _v FROM ${table(ch)} WHERE ${inner.join(' AND ')})
      WHERE ${outer.join(' AND ')} GROUP BY _v ORDER BY count() DESC, _v ASC LIMIT ${params.number(input.limit)}`,
    params,
    'JSONEachRow',
  );
  return rows.map((r) => r._v);
}

/** A run of a page's events whose data together fits in `maxBytes` (or a single larger event), in page order. */
export type PagePart = Readonly<{ rows: readonly { _id: string; _ts: string }[] }>;

/**
 * The page split into parts of at most `maxBytes` of event data: a cheap first read of ids,
 * timestamps and sizes only, so the server never holds more than one part of a page of large
 * events (ten 3 MB events once made one list answer 390 MB), and the page is still whole: a
 * client that stops at a page shorter than its `limit` (Airbyte's connector does) reads every event.
 */
async function pageParts(
  ch: ClickHouse,
  where: string,
  orderSql: string,
  page: string,
  params: Params,
  input: ListInput,
): Promise<PagePart[] & { more: boolean }> {
  const sizes = await runEventsQuery<{ _id: string; _ts: string; _size: number }[]>(
    ch,
    `SELECT toString(uuid) AS _id, toString(timestamp) AS _ts, length(properties) + length(elements_chain) + length(distinct_id) + length(event) AS _size
       FROM ${table(ch)} WHERE ${where} ORDER BY ${orderSql} ${page}`,
    params,
    'JSONEachRow',
  );
  const budget = input.maxBytes ?? Infinity;
  const parts: PagePart[] = [];
  let rows: { _id: string; _ts: string }[] = [];
  let total = 0;
  for (const row of sizes.slice(0, input.limit)) {
    const size = Number(row._size);
    if (rows.length > 0 && total + size > budget) {
      parts.push({ rows });
      rows = [];
      total = 0;
    }
    rows.push({ _id: row._id, _ts: row._ts });
    total += size;
  }
  if (rows.length > 0) parts.push({ rows });
  return Object.assign(parts, { more: sizes.length > input.limit });
}

/**
 * The events of one part of a page, in the page's order: by id within the part's time range (the
 * range lets ClickHouse skip the rest of the project's events). An event deleted since the page
 * was planned is missing from it.
 */
export async function readPagePart(
  ch: ClickHouse,
  projectId: number,
  part: PagePart,
): Promise<EventRow[]> {
  const params = new Params();
  const times = part.rows.map((r) => r._ts).sort();
  const found = await runEventsQuery<EventRow[]>(
    ch,
    `SELECT ${EVENT_COLUMNS_SQL} FROM ${table(ch)}
      WHERE team_id = ${params.number(projectId)}
        AND timestamp >= toDateTime64(${params.string(times[0]!)}, 6, 'UTC')
        AND timestamp <= toDateTime64(${params.string(times.at(-1)!)}, 6, 'UTC')
        AND has(${params.strings(part.rows.map((r) => r._id))}, toString(uuid))`,
    params,
    'JSONEachRow',
  );
  const byId = new Map(found.map((row) => [row._id, row]));
  return part.rows.flatMap((r) => byId.get(r._id) ?? []);
}
