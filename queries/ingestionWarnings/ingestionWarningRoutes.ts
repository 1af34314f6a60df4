import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ingestionWarningsReader } from '../../projections/ingestionWarnings/ingestionWarningsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';

const Warning = z.object({
  type: z.string(),
  timestamp: z.string(),
  details: z.record(z.string(), z.unknown()),
});
const WarningGroup = z
  .object({
    type: z.string(),
    lastSeen: z.string(),
    warnings: z.array(Warning),
    count: z.number().int(),
  })
  .meta({ id: 'IngestionWarningGroup' });

/**
 * GET ingestion_warnings/: PostHog's shape, warnings grouped by type, newest first (the 50 newest
 * of each type are listed, `count` covers all in the window).
 */
export const ingestionWarningRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const warnings = ingestionWarningsReader(ctx.pool);
    app.get(
      '/api/projects/:project_id/ingestion_warnings/',
      {
        config: { scope: 'query:read' },
        schema: {
          tags: ['ingestion'],
          params: ProjectParams,
          querystring: z.object({
            days: z.coerce
              .number()
              .int()
              .min(1)
              .max(365)
              .default(30)
              .describe('warnings of the last N days (1–365)'),
          }),
          response: { 200: z.object({ results: z.array(WarningGroup) }), ...errorResponses },
        },
      },
      async (request) => {
        return { results: await warnings.groupedByType(projectOf(request).id, request.query.days) };
      },
    );
  };
