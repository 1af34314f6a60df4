import { projectOf } from '../../src/http/apiScope.ts';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../src/appContext.ts';
import { errorResponses } from '../../src/http/apiError.ts';

const Warning = z.object({ type: z.string(), timestamp: z.string(), details: z.record(z.string(), z.unknown()) });
const WarningGroup = z
  .object({ type: z.string(), lastSeen: z.string(), warnings: z.array(Warning), count: z.number().int() })
  .meta({ id: 'IngestionWarningGroup' });

/**
 * GET ingestion_warnings/: PostHog's shape, warnings grouped by type, newest first (the 50 newest
 * of each type are listed, `count` covers all in the window).
 */
export const ingestionWarningRoutes = (ctx: AppContext): FastifyPluginAsync => async (base) => {
  const app = base.withTypeProvider<ZodTypeProvider>();
  app.get('/api/projects/:project_id/ingestion_warnings/', {
    config: { scope: 'query:read' },
    schema: {
      tags: ['ingestion'],
      params: z.object({ project_id: z.string() }),
      querystring: z.object({ days: z.coerce.number().int().min(1).max(365).default(30) }),
      response: { 200: z.object({ results: z.array(WarningGroup) }), ...errorResponses },
    },
  }, async (request) => {
    const { rows } = await ctx.pool.query<{ type: string; last_seen: Date; count: string; warnings: { type: string; timestamp: string; details: Record<string, unknown> }[] }>(
      `SELECT type, max(at) AS last_seen, count(*) AS count,
              (array_agg(jsonb_build_object('type', type, 'timestamp', to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'details', details) ORDER BY at DESC))[1:50] AS warnings
         FROM (SELECT project_id, type, details, at FROM ingestion_warnings
               UNION ALL
               -- merge refusals and illegal ids, found by the persons projection
               SELECT project_id, type, details, at FROM person_ingestion_warnings) w
        WHERE project_id = $1 AND at > now() - make_interval(days => $2)
        GROUP BY type ORDER BY max(at) DESC`,
      [projectOf(request).id, request.query.days],
    );
    return {
      results: rows.map((r) => ({ type: r.type, lastSeen: r.last_seen.toISOString(), warnings: r.warnings, count: Number(r.count) })),
    };
  });
};
