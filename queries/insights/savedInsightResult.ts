/**
 * A saved insight's legacy `filters` → what the insight engine computes (`insights/trend/`'s
 * TrendQuery), and its result. Trends, stickiness and lifecycle are computed; a funnel,
 * retention or paths insight is stored as sent and refused by `refresh` with the endpoint that
 * computes it.
 */
import { z } from 'zod';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';
import { entitiesOf } from './insightParams.ts';
import { insightSeries, TrendQuery } from './insightSeries.ts';

const SHOWN_AS = { TRENDS: undefined, STICKINESS: 'Stickiness', LIFECYCLE: 'Lifecycle' } as const;
const ELSEWHERE: Record<string, string> = {
  FUNNELS: 'insights/funnel/',
  RETENTION: 'insights/retention/',
  PATHS: 'insights/path/',
};
/** The legacy insight types a saved insight may have. */
export const INSIGHT_TYPES = ['TRENDS', 'STICKINESS', 'LIFECYCLE', 'FUNNELS', 'RETENTION', 'PATHS'];

const insightType = (filters: Record<string, unknown>) =>
  typeof filters.insight === 'string' ? filters.insight : 'TRENDS';

/** The TrendQuery a trends, stickiness or lifecycle insight's filters mean; undefined for others. */
export function trendQueryOfFilters(filters: Record<string, unknown>): TrendQuery | undefined {
  const type = insightType(filters);
  if (!(type in SHOWN_AS)) return undefined;
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(filters))
    if (k in TrendQuery.shape && v !== null && v !== undefined)
      params[k] = typeof v === 'string' ? v : JSON.stringify(v);
  const shownAs = SHOWN_AS[type as keyof typeof SHOWN_AS];
  if (shownAs) params.shown_as = shownAs;
  const parsed = TrendQuery.safeParse(params);
  if (!parsed.success)
    fail(
      invalidInput(
        `filters: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
        'filters',
      ),
    );
  return parsed.data;
}

/** A 400 now for filters `refresh` could not compute later (an insight type, a bad series). */
export function checkFilters(filters: Record<string, unknown>): void {
  const type = insightType(filters);
  if (!INSIGHT_TYPES.includes(type))
    fail(invalidInput(`filters.insight must be one of ${INSIGHT_TYPES.join(', ')}.`, 'filters'));
  const query = trendQueryOfFilters(filters);
  if (query) entitiesOf(query);
}

/** Computes the insight's result now (the `result` of `insights/trend/` for the same filters). */
export async function computeInsightResult(
  ctx: AppContext,
  ch: ClickHouse,
  projectId: number,
  filters: Record<string, unknown>,
): Promise<unknown> {
  const query = trendQueryOfFilters(filters);
  if (!query) {
    const type = insightType(filters);
    return fail(
      invalidInput(
        `refresh computes trends, stickiness and lifecycle insights; compute this ${type} insight with ${ELSEWHERE[type] ?? 'its endpoint'} and its filters.`,
        'refresh',
      ),
    );
  }
  await awaitAnalytics(ctx);
  return (await insightSeries(ctx, ch, projectId, query)).result;
}

/** `refresh` as PostHog takes it: true / blocking / force_* compute; false / force_cache read the cache. */
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
    'true, blocking, force_blocking (and the async modes, computed at once here): compute the result now and cache it; false or force_cache (default): the cached result',
  );
export const refreshRequested = (refresh: z.infer<typeof RefreshParam>) =>
  refresh !== undefined && refresh !== 'false' && refresh !== 'force_cache';
