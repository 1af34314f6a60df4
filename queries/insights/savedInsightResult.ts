/**
 * A saved insight's legacy `filters` → the parameters of the legacy endpoint of its kind, and its
 * result computed by that endpoint's engine: trends, stickiness and lifecycle as `insights/trend/`
 * answers them, funnels as `insights/funnel/`, retention as `insights/retention/`, paths as
 * `insights/path/` (PostHog's insight `result` is the same list).
 */
import { z } from 'zod';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';
import { bodyAsQuery, FunnelQuery, funnelSteps } from './funnelParams.ts';
import { funnelResult } from './funnelResult.ts';
import { entitiesOf } from './insightParams.ts';
import { insightSeries, TrendQuery } from './insightSeries.ts';
import { PathQuery, pathResult } from './pathResult.ts';
import { RetentionQuery, retentionResult } from './retentionResult.ts';

const SHOWN_AS = { TRENDS: undefined, STICKINESS: 'Stickiness', LIFECYCLE: 'Lifecycle' } as const;
/** The legacy insight types a saved insight may have. */
export const INSIGHT_TYPES = ['TRENDS', 'STICKINESS', 'LIFECYCLE', 'FUNNELS', 'RETENTION', 'PATHS'];
/** PostHog's paths `include_event_types` (one kind is computed here) → our `path_type`. */
const PATH_TYPES = new Set(['$pageview', '$screen', 'custom_event']);

const insightType = (filters: Record<string, unknown>) =>
  typeof filters.insight === 'string' ? filters.insight : 'TRENDS';

const refuseFilters = (detail: string): never => fail(invalidInput(detail, 'filters'));

/** The filters as the parameters `schema` reads (lists and objects as JSON text), or a 400. */
function parseFilters<S extends z.ZodType>(
  schema: S,
  filters: Record<string, unknown>,
): z.infer<S> {
  const parsed = schema.safeParse(bodyAsQuery(filters));
  if (!parsed.success)
    refuseFilters(
      `filters: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data as z.infer<S>;
}

/** The TrendQuery a trends, stickiness or lifecycle insight's filters mean; undefined for others. */
export function trendQueryOfFilters(filters: Record<string, unknown>): TrendQuery | undefined {
  const type = insightType(filters);
  if (!(type in SHOWN_AS)) return undefined;
  const params: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(filters)) if (k in TrendQuery.shape) params[k] = v;
  const shownAs = SHOWN_AS[type as keyof typeof SHOWN_AS];
  if (shownAs) params.shown_as = shownAs;
  return parseFilters(TrendQuery, params);
}

function funnelQueryOfFilters(filters: Record<string, unknown>): FunnelQuery {
  const viz = filters.funnel_viz_type;
  if (viz !== undefined && viz !== null && viz !== 'steps')
    refuseFilters(`funnel_viz_type ${String(viz)} is not computed here: only steps.`);
  if (Array.isArray(filters.exclusions) && filters.exclusions.length > 0)
    refuseFilters('funnel exclusions are not supported.');
  const q = parseFilters(FunnelQuery, filters);
  funnelSteps(q);
  return q;
}

function pathQueryOfFilters(filters: Record<string, unknown>): PathQuery {
  const { include_event_types: types, ...rest } = filters;
  if (types !== undefined && types !== null) {
    const one = Array.isArray(types) && types.length === 1 ? types[0] : undefined;
    if (typeof one !== 'string' || !PATH_TYPES.has(one))
      refuseFilters(
        'include_event_types must be one of ["$pageview"], ["$screen"], ["custom_event"].',
      );
    rest.path_type = one;
  }
  return parseFilters(PathQuery, rest);
}

/** A 400 now for filters `refresh` could not compute later (an insight type, a bad series). */
export function checkFilters(filters: Record<string, unknown>): void {
  const type = insightType(filters);
  if (!INSIGHT_TYPES.includes(type))
    refuseFilters(`filters.insight must be one of ${INSIGHT_TYPES.join(', ')}.`);
  if (type === 'FUNNELS') funnelQueryOfFilters(filters);
  else if (type === 'RETENTION') parseFilters(RetentionQuery, filters);
  else if (type === 'PATHS') pathQueryOfFilters(filters);
  else entitiesOf(trendQueryOfFilters(filters)!);
}

/** Computes the insight's result now: the `result` of its kind's legacy endpoint for its filters. */
export async function computeInsightResult(
  ctx: AppContext,
  ch: ClickHouse,
  projectId: number,
  filters: Record<string, unknown>,
): Promise<unknown> {
  const type = insightType(filters);
  if (type === 'FUNNELS') return funnelResult(ctx, ch, projectId, funnelQueryOfFilters(filters));
  if (type === 'RETENTION')
    return retentionResult(ctx, ch, projectId, parseFilters(RetentionQuery, filters));
  if (type === 'PATHS') return pathResult(ctx, ch, projectId, pathQueryOfFilters(filters));
  const query =
    trendQueryOfFilters(filters) ??
    refuseFilters(`filters.insight must be one of ${INSIGHT_TYPES.join(', ')}.`);
  await awaitAnalytics(ctx);
  return (await insightSeries(ctx, ch, projectId, query)).result;
}

/** `refresh` as PostHog takes it (posthog/hogql_queries/query_runner.py, ExecutionMode). */
export const RefreshParam = z
  .enum([
    'true',
    'false',
    'blocking',
    'force_blocking',
    'force_cache',
    'async',
    'force_async',
    'lazy_async',
  ])
  .optional()
  .describe(
    'true, force_blocking, force_async: compute now and cache; blocking, async, lazy_async: the cached result until next_allowed_client_refresh, then compute (no background queue: async modes compute at once); false or force_cache (default): the cached result only',
  );
export type RefreshMode = 'always' | 'when_stale' | 'never';
export function refreshMode(refresh: z.infer<typeof RefreshParam>): RefreshMode {
  if (refresh === 'true' || refresh === 'force_blocking' || refresh === 'force_async')
    return 'always';
  if (refresh === 'blocking' || refresh === 'async' || refresh === 'lazy_async')
    return 'when_stale';
  return 'never';
}
