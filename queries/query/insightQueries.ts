/**
 * Insight query kinds on `POST /api/projects/:id/query/` (TrendsQuery, FunnelsQuery, …, bare or in
 * an InsightVizNode): the query is mapped to the legacy filters a saved insight's query maps to,
 * and computed by the same engine as the legacy insight endpoints, so `/query` and
 * `insights/trend/` (funnel, retention, path) give the same numbers for the same question.
 */
import { filtersOfQuery } from '../../commands/insights/model/insightQuery.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { computeInsightResult } from '../insights/savedInsightResult.ts';

/** The query kinds answered here (bare, or as an InsightVizNode's `source`). */
export const INSIGHT_QUERY_KINDS: readonly string[] = [
  'TrendsQuery',
  'FunnelsQuery',
  'RetentionQuery',
  'StickinessQuery',
  'LifecycleQuery',
  'PathsQuery',
  'InsightVizNode',
];

/** The whole response body PostHog answers for the query's kind. */
export async function runInsightQuery(
  deps: { ctx: AppContext; ch: ClickHouse },
  projectId: number,
  query: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const mapping = filtersOfQuery(query);
  if (!mapping.ok) fail(invalidInput(mapping.detail, 'query'));
  const results = await computeInsightResult(deps.ctx, deps.ch, projectId, mapping.filters);
  const now = new Date().toISOString();
  return { results, is_cached: false, last_refresh: now, timings: [] };
}
