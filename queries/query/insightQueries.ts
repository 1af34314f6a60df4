/**
 * Insight query kinds on `POST /api/projects/:id/query/` (TrendsQuery, FunnelsQuery, …, bare or in
 * an InsightVizNode): the query is mapped to the legacy filters a saved insight's query maps to
 * (plus ActionsNode series, commands/insights/model/insightQuery.ts), what the engine does not
 * compute is refused with its field (insightQueryRefusals.ts), and the result is computed by the
 * same engine as the legacy insight endpoints, so `/query` and `insights/trend/` (funnel,
 * retention, path) give the same numbers for the same question. The body is PostHog's
 * `Cached<Kind>QueryResponse` (posthog/schema.py): nothing is cached here, so every answer is
 * computed now (`is_cached` false) and may be asked again at once.
 */
import { createHash } from 'node:crypto';
import { filtersOfQuery } from '../../commands/insights/model/insightQuery.ts';
import { isObject } from '../../commands/insights/model/insightQueryParts.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { computeInsightResult } from '../insights/savedInsightResult.ts';
import { refusedField, withSingleBreakdown } from './insightQueryRefusals.ts';

/** The query kinds answered here (the insight kinds, bare or as an InsightVizNode's `source`). */
export const INSIGHT_QUERY_KINDS: readonly string[] = [
  'TrendsQuery',
  'FunnelsQuery',
  'RetentionQuery',
  'StickinessQuery',
  'LifecycleQuery',
  'PathsQuery',
  'InsightVizNode',
];

const refuse = (detail: string): never => fail(invalidInput(detail, 'query'));

/** The whole response body PostHog answers for the query's kind. */
export async function runInsightQuery(
  deps: { ctx: AppContext; ch: ClickHouse },
  projectId: number,
  query: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const started = performance.now();
  const raw = query.kind === 'InsightVizNode' ? query.source : query;
  if (!isObject(raw)) return refuse('query.source must be an insight query (a TrendsQuery…).');
  const source = withSingleBreakdown(raw);
  const refused = refusedField(source);
  if (refused) refuse(refused);
  const mapping = filtersOfQuery(source, { actions: true });
  if (!mapping.ok) return refuse(mapping.detail);
  const results = await computeInsightResult(deps.ctx, deps.ch, projectId, mapping.filters);
  const now = deps.ctx.now().toISOString();
  const key = createHash('sha256')
    .update(`${projectId} ${JSON.stringify(source)}`)
    .digest('hex');
  return {
    results,
    // PostHog shows the HogQL its runner generated; the engine here writes ClickHouse SQL directly
    hogql: null,
    is_cached: false,
    cache_key: `cache_${key.slice(0, 32)}`,
    last_refresh: now,
    next_allowed_client_refresh: now,
    timezone: 'UTC',
    timings: [{ k: './query', t: (performance.now() - started) / 1000 }],
    query_status: null,
  };
}
