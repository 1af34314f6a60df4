import type pg from 'pg';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { clickHouseQueryError } from '../../src/runtime/clickhouseErrors.ts';
import { HogQLError, HogQLTimeoutError } from './errors.ts';
import type { Node } from './parser.ts';
import { parseExpr, parseSelect } from './parser.ts';
import { SelectPrinter } from './printSelect.ts';
import { type PostgresInClickHouse, postgresInClickHouse } from './tables.ts';

/** Rows a query answers unless it asks for fewer or more (PostHog's DEFAULT_RETURNED_ROWS). */
export const DEFAULT_LIMIT = 100;
/** Most rows one answer holds (PostHog's MAX_SELECT_RETURNED_ROWS). */
export const MAX_LIMIT = 50_000;

/**
 * Most bytes one answer may hold in ClickHouse's memory (its blocks, uncompressed; the JSON the
 * server then reads and sends is of the same order): 50,000 rows of wide cells (whole
 * `properties`, long arrays) could otherwise be gigabytes in the server's memory. PostHog sets no
 * such limit (its ClickHouse and web servers are separate machines); here they share one.
 */
export const MAX_RESULT_BYTES = 64 * 1024 * 1024;

/**
 * Per-query ClickHouse limits (PostHog's HogQLGlobalSettings and limits). chDB honours every one
 * of them through the client (checked in test/projections/hogql): they are set per statement
 * (src/runtime/chdbSettings.ts scopes them). `readonly` only on a ClickHouse server: in chDB's
 * one session `readonly` cannot be set back, so it would lock every later statement; there the
 * printer is the guard (it only ever prints a SELECT over scoped sources and allowed functions).
 */
export const HOGQL_SETTINGS = {
  max_execution_time: 30,
  max_memory_usage: 2_000_000_000,
  max_ast_depth: 1_000,
  max_ast_elements: 1_000_000,
  max_expanded_ast_elements: 1_000_000,
  max_result_rows: MAX_LIMIT + 2,
  max_result_bytes: MAX_RESULT_BYTES,
  result_overflow_mode: 'throw',
  transform_null_in: 1,
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_denormals: 0,
} as const;

export type HogQLRun = {
  projectId: number;
  query: string;
  values?: Record<string, unknown>;
  filtersExpr?: string;
  limit?: number;
  offset?: number;
  queryId?: string;
  signal?: AbortSignal;
};

export type HogQLResult = {
  results: unknown[][];
  columns: string[];
  types: [string, string][];
  hogql: string;
  clickhouse: string;
  hasMore: boolean;
  limit: number;
  offset: number;
};

/** ClickHouse, and the Postgres read models (`pool`'s database) for persons, groups, cohort_people. */
export type HogQLDeps = { ch: ClickHouse; pool?: pg.Pool; postgres?: PostgresInClickHouse };

const postgresOf = new WeakMap<pg.Pool, PostgresInClickHouse | undefined>();
const reachPostgres = (deps: HogQLDeps) => {
  if (deps.postgres) return deps.postgres;
  const pool = deps.pool;
  if (!pool) return undefined;
  if (!postgresOf.has(pool)) {
    const url = (pool as unknown as { options: { connectionString?: string } }).options
      .connectionString;
    postgresOf.set(pool, url ? postgresInClickHouse(url) : undefined);
  }
  return postgresOf.get(pool);
};

const constantNumber = (node: Node | null | undefined, what: string): number | undefined => {
  if (!node) return undefined;
  if (
    node.node !== 'Constant' ||
    typeof node.value !== 'number' ||
    !Number.isInteger(node.value) ||
    node.value < 0
  )
    throw new HogQLError(`${what} must be a whole number`, { start: node.start?.offset });
  return node.value;
};

/** Compiles a HogQL SELECT to ClickHouse SQL over the project's rows, with the answer's paging. */
export async function compileHogQL(
  deps: Pick<HogQLDeps, 'ch' | 'pool' | 'postgres'>,
  run: HogQLRun,
): Promise<{ sql: string; limit: number; offset: number }> {
  const ast = await parseSelect(run.query);
  const filters = run.filtersExpr ? await parseExpr(run.filtersExpr) : undefined;
  const printer = new SelectPrinter({
    database: deps.ch.database,
    projectId: run.projectId,
    postgres: reachPostgres(deps),
    text: run.query,
    values: run.values ?? {},
    filters,
  });
  const single = ast.node === 'SelectQuery';
  const asked = single ? constantNumber(ast.limit, 'LIMIT') : undefined;
  const limit = Math.min(asked ?? run.limit ?? DEFAULT_LIMIT, MAX_LIMIT);
  const offset = (single ? constantNumber(ast.offset, 'OFFSET') : undefined) ?? run.offset ?? 0;
  if (single) {
    // one more row than answered tells whether there are more
    const paged = {
      ...ast,
      limit: { node: 'Constant', value: limit + 1 },
      offset: offset ? { node: 'Constant', value: offset } : null,
    };
    return { sql: printer.print(paged), limit, offset };
  }
  return {
    sql: `SELECT * FROM (${printer.print(ast)}) LIMIT ${limit + 1}${offset ? ` OFFSET ${offset}` : ''}`,
    limit,
    offset,
  };
}

export type Compact = {
  meta: { name: string; type: string }[];
  data: unknown[][];
  totals?: unknown[];
};

/** ClickHouse's `2024-01-02 03:04:05.678900` (UTC) as the API writes times: ISO 8601, milliseconds, Z. */
const isoTime = (value: unknown): unknown => {
  if (typeof value !== 'string') return value;
  const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)?$/.exec(value);
  if (!m) return value;
  const fraction = m[3] && Number(m[3]) !== 0 ? m[3].slice(0, 4).padEnd(4, '0') : '';
  return `${m[1]}T${m[2]}${fraction}Z`;
};
const isTime = (type: string) =>
  /^(Nullable\()?DateTime(64)?\b/.test(type) && !/'(?!UTC')[^']*'/.test(type);

/** Runs a HogQL query: compiled, bounded, read-only, its errors mapped to 400/504 (never 500). */
export async function runHogQL(deps: HogQLDeps, run: HogQLRun): Promise<HogQLResult> {
  const { sql, limit, offset } = await compileHogQL(deps, run);
  const postgres = reachPostgres(deps);
  const redact = (text: string) => (postgres ? postgres.redact(text) : text);
  const body = await runCompiled(deps.ch, sql, {}, run, redact);
  const times = body.meta.map((m) => isTime(m.type));
  const rows = body.data.map((row) => row.map((v, i) => (times[i] ? isoTime(v) : v)));
  const hasMore = rows.length > limit;
  const results = hasMore ? rows.slice(0, limit) : rows;
  if (body.totals) results.push(body.totals.map((v, i) => (times[i] ? isoTime(v) : v)));
  return {
    results,
    columns: body.meta.map((m) => m.name),
    types: body.meta.map((m) => [m.name, m.type]),
    hogql: run.query,
    clickhouse: redact(sql),
    hasMore,
    limit,
    offset,
  };
}

/**
 * Runs compiled SQL with HOGQL_SETTINGS (plus `settings`) and reads ClickHouse's JSONCompact
 * answer (`meta`, `data`, `totals`); failures mapped by hogqlFailure.
 */
export async function runCompiled(
  ch: ClickHouse,
  sql: string,
  settings: Readonly<Record<string, unknown>>,
  run: Pick<HogQLRun, 'queryId' | 'signal'> = {},
  redact: (text: string) => string = (t) => t,
): Promise<Compact> {
  try {
    const result = await ch.client.query({
      query: sql,
      format: 'JSONCompact',
      clickhouse_settings: {
        ...HOGQL_SETTINGS,
        ...(ch.embedded ? {} : { readonly: '2' }),
        ...settings,
      } as never,
      ...(run.queryId ? { query_id: run.queryId } : {}),
      ...(run.signal ? { abort_signal: run.signal } : {}),
    });
    return JSON.parse(await result.text()) as Compact;
  } catch (error) {
    // chDB hands what a statement stopped mid-run (time, memory, rows) had written to the NEXT
    // statement's result: a statement that reads no result takes it instead of another reader
    if (ch.embedded) await ch.client.command({ query: 'SELECT 1' }).catch(() => undefined);
    throw hogqlFailure(error, redact);
  }
}

/** ClickHouse errors a query causes are the client's (400, or 504 for time); others stay as they are. */
export function hogqlFailure(error: unknown, redact: (text: string) => string = (t) => t): unknown {
  if (error instanceof Error && error.name === 'AbortError') return error;
  const known = clickHouseQueryError(error);
  if (known?.type === 'TIMEOUT_EXCEEDED')
    return new HogQLTimeoutError(HOGQL_SETTINGS.max_execution_time);
  if (known?.type === 'TOO_MANY_ROWS_OR_BYTES' && /max bytes/.test(known.message)) {
    const size = /current bytes: ([\d.]+ \w+)/.exec(known.message)?.[1];
    return new HogQLError(
      `The answer is larger than its limit of ${MAX_RESULT_BYTES / 1024 / 1024} MiB (max_result_bytes${size ? `; it reached ${size}` : ''}): select fewer or narrower columns, or fewer rows (LIMIT)`,
    );
  }
  if (known) return new HogQLError(`${known.type}: ${redact(known.message)}`);
  const e = error as { type?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : '';
  // any other refusal of the statement by ClickHouse (NOT_IMPLEMENTED, an alias used twice…) is
  // still about the query; a connection failure (no `DB::Exception`) is not
  if (
    (typeof e?.type === 'string' || message.includes('DB::Exception')) &&
    !/POSTGRESQL_CONNECTION_FAILURE|NETWORK_ERROR|SOCKET_TIMEOUT/.test(
      `${String(e.type)} ${message}`,
    )
  )
    return new HogQLError(
      `${typeof e.type === 'string' ? `${e.type}: ` : ''}${redact(
        message
          .replace(/^Code: \d+\. DB::Exception: /, '')
          .split(/\s*\(version |Stack trace/)[0]!
          .slice(0, 300),
      )}`,
    );
  if (error instanceof Error) error.message = redact(error.message);
  return error;
}
