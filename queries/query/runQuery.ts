import { z } from 'zod';
import { hogqlDatabaseSchema } from '../../projections/hogql/index.ts';
import { hogqlFiltersExpr } from '../../projections/hogql/propertyFiltersHogQL.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import { runActorsQuery } from './actorsQuery.ts';
import { runEventsQuery } from './eventsQuery.ts';
import { INSIGHT_QUERY_KINDS, runInsightQuery } from './insightQueries.ts';
import {
  freshness,
  Limit,
  Offset,
  parseKind,
  type QueryDeps,
  type QueryRun,
  runKindHogQL,
} from './queryRun.ts';

/** The kinds `/query` answers, named in the 400 for any other. */
export const QUERY_KINDS: readonly string[] = [
  'HogQLQuery',
  'EventsQuery',
  'ActorsQuery',
  'PersonsNode',
  'DatabaseSchemaQuery',
  ...INSIGHT_QUERY_KINDS,
];

const HogQLQuery = z.looseObject({
  kind: z.literal('HogQLQuery'),
  query: z.string().min(1, 'a HogQL SELECT is required'),
  values: z.record(z.string(), z.unknown()).optional(),
  filters: z.looseObject({}).nullable().optional(),
  limit: Limit,
  offset: Offset,
});

async function runHogQLQuery(deps: QueryDeps, run: QueryRun, raw: unknown) {
  const q = parseKind(HogQLQuery, raw);
  const filtersExpr = hogqlFiltersExpr(q.filters, run.now);
  const result = await runKindHogQL(
    deps,
    run,
    {
      query: q.query,
      ...(q.values ? { values: q.values } : {}),
      ...(filtersExpr !== undefined ? { filtersExpr } : {}),
    },
    q,
  );
  return { ...freshness(run.now), query: q.query, error: null, modifiers: {}, ...result };
}

/** Runs a query node by its kind and returns the whole body PostHog answers for that kind. */
export async function runQuery(
  deps: QueryDeps,
  run: QueryRun,
  query: Record<string, unknown> & { kind: string },
): Promise<Record<string, unknown>> {
  switch (query.kind) {
    case 'HogQLQuery':
      return runHogQLQuery(deps, run, query);
    case 'EventsQuery':
      return runEventsQuery(deps, run, query);
    case 'ActorsQuery':
    case 'PersonsNode':
      return runActorsQuery(deps, run, query);
    case 'DatabaseSchemaQuery':
      return { tables: hogqlDatabaseSchema(), joins: [] };
  }
  if (INSIGHT_QUERY_KINDS.includes(query.kind))
    return runInsightQuery({ ctx: deps.ctx, ch: deps.ch }, run.projectId, query);
  fail(
    invalidInput(
      `query.kind: ${JSON.stringify(query.kind)} is not supported here; supported kinds: ${QUERY_KINDS.join(', ')}`,
      'query',
    ),
  );
}
