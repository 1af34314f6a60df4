import { z } from 'zod';
import {
  type PathInput,
  parseStepKey,
  pathEdges,
} from '../../projections/analytics/pathsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { resolveAll } from './allDates.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';
import { bodyAsQuery } from './funnelParams.ts';
import { chartRange } from './insightDates.ts';
import { InsightQuery, seriesInput } from './insightParams.ts';

const stepKey = (what: string) =>
  z.string().max(2000).optional().describe(`actors: ${what}, as \`<step>_<item>\` (e.g. 1_/home)`);

/** PostHog's paths filter parameters. */
export const PathQuery = InsightQuery.omit({ events: true, interval: true }).extend({
  path_type: z
    .enum(['$pageview', '$screen', 'custom_event'])
    .optional()
    .describe(
      'items: $current_url of pageviews (default), $screen_name of screens, or names of custom (non-$) events',
    ),
  start_point: z
    .string()
    .max(2000)
    .optional()
    .describe('paths start at the first occurrence of this item'),
  end_point: z
    .string()
    .max(2000)
    .optional()
    .describe('paths end at the first occurrence of this item'),
  step_limit: z.coerce.number().int().min(2).max(20).default(5).describe('items per path'),
  edge_limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(50)
    .describe('edges answered, most persons first'),
  path_start_key: stepKey('persons who went from this item'),
  path_end_key: stepKey('… to this one (the next step)'),
  path_dropoff_key: stepKey('persons whose path ended at this item'),
});
export type PathQuery = z.infer<typeof PathQuery>;

/** The query (GET) and the body (POST, the body wins) as a paths filter, step keys checked. */
export function parsePathRequest(query: unknown, body: unknown): PathQuery {
  const parsed = PathQuery.safeParse({
    ...(query as Record<string, string>),
    ...bodyAsQuery(body),
  });
  if (!parsed.success) {
    const attr = String(parsed.error.issues[0]!.path[0] ?? '');
    fail(invalidInput(`${attr}: ${parsed.error.issues[0]!.message}`, attr || null));
  }
  for (const key of ['path_start_key', 'path_end_key', 'path_dropoff_key'] as const) {
    const k = parsed.data[key];
    if (k !== undefined && parseStepKey(k) === null)
      fail(invalidInput(`${key} must be <step>_<item>, like 1_/home.`, key));
  }
  return parsed.data;
}

/** The paths reader's input for a parsed filter (`date_from=all` resolved). */
export async function pathInputOf(
  ctx: AppContext,
  ch: ClickHouse,
  projectId: number,
  query: PathQuery,
): Promise<PathInput> {
  const now = ctx.now();
  const q = await resolveAll(ctx, ch, projectId, query);
  const range = chartRange(q, 'day', now);
  const series = await seriesInput(
    ctx.pool,
    projectId,
    now,
    q as unknown as InsightQuery,
    { id: null, name: '', order: 0, math: 'total', properties: undefined },
    range,
  );
  const { event: _every, ...rest } = series;
  return {
    ...rest,
    pathType: q.path_type ?? '$pageview',
    stepLimit: q.step_limit,
    ...(q.start_point !== undefined ? { startPoint: q.start_point } : {}),
    ...(q.end_point !== undefined ? { endPoint: q.end_point } : {}),
  };
}

/** A path edge as `insights/path/` answers it (PostHog's legacy paths result). */
export type PathEdge = { source: string; target: string; value: number };

/** The edges, most persons first; `insights/path/` and a saved paths insight's refresh answer it. */
export async function pathResult(
  ctx: AppContext,
  ch: ClickHouse,
  projectId: number,
  q: PathQuery,
): Promise<PathEdge[]> {
  const paths = await pathInputOf(ctx, ch, projectId, q);
  await awaitAnalytics(ctx);
  const edges = await pathEdges(ch, paths, q.edge_limit);
  return edges.map((e) => ({ source: e.source, target: e.target, value: e.persons }));
}
