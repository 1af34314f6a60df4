import { z } from 'zod';
import { type HogQLDeps, type HogQLRun, runHogQL } from '../../projections/hogql/index.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { DEFAULT_QUERY_ROWS, MAX_QUERY_ROWS } from './querySchemas.ts';

/** What the query kinds share: their dependencies, one run's facts, paging fields, field checks. */

export type QueryDeps = Readonly<{ ctx: AppContext; ch: ClickHouse; hogql: HogQLDeps }>;

/** One run of a query: its project, clock, id (ClickHouse's query id) and cancellation. */
export type QueryRun = Readonly<{
  projectId: number;
  now: Date;
  queryId: string;
  signal?: AbortSignal;
}>;

export const Limit = z.number().int().min(1).max(MAX_QUERY_ROWS).optional();
export const Offset = z.number().int().min(0).max(1_000_000_000).optional();
/** HogQL texts a kind takes as a list (`select`, `where`, `orderBy`): at most 100 of 10,000 characters. */
export const Expressions = z.array(z.string().min(1).max(10_000)).max(100);

/** A kind's own fields, checked: a bad field is a 400 naming it, under `query`. */
export function parseKind<S extends z.ZodType>(schema: S, query: unknown): z.infer<S> {
  const parsed = schema.safeParse(query);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const at = ['query', ...issue.path.map(String)].join('.');
  fail(invalidInput(`${at}: ${issue.message}`, 'query'));
}

/** What every answered query carries as PostHog's cached-response fields (nothing is cached here). */
export const freshness = (now: Date) => ({
  is_cached: false,
  cache_key: null,
  last_refresh: now.toISOString(),
  next_allowed_client_refresh: now.toISOString(),
  timezone: 'UTC',
  timings: [],
});

/**
 * Runs a kind's HogQL in this run's project, under its query id and cancellation, one page of it
 * (PostHog's 100 rows unless the query asks for a limit).
 */
export function runKindHogQL(
  deps: QueryDeps,
  run: QueryRun,
  hogql: Pick<HogQLRun, 'query' | 'values' | 'filtersExpr'>,
  page: Readonly<{ limit?: number | undefined; offset?: number | undefined }>,
) {
  return runHogQL(deps.hogql, {
    ...hogql,
    projectId: run.projectId,
    limit: page.limit ?? DEFAULT_QUERY_ROWS,
    offset: page.offset ?? 0,
    queryId: run.queryId,
    ...(run.signal ? { signal: run.signal } : {}),
  });
}

/** One SELECT from the clauses a kind builds; an empty clause is left out. */
export function selectHogQL(
  clauses: Readonly<{
    select: readonly string[];
    from: string;
    where: readonly string[];
    groupBy?: readonly string[];
    orderBy: readonly string[];
  }>,
): string {
  const { select, from, where, groupBy = [], orderBy } = clauses;
  return [
    `SELECT ${select.join(', ')}`,
    `FROM ${from}`,
    where.length ? `WHERE ${where.join(' AND ')}` : '',
    groupBy.length ? `GROUP BY ${groupBy.join(', ')}` : '',
    orderBy.length ? `ORDER BY ${orderBy.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}
