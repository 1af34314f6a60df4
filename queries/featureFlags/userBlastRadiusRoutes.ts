import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { blastRadiusReader } from '../../projections/persons/blastRadiusReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { BlastRadiusAnswer, BlastRadiusBody, userBlastRadius } from './userBlastRadius.ts';

/**
 * `POST feature_flags/user_blast_radius/`: how many persons a release condition reaches. A read
 * (nothing is written), so it needs `feature_flag:read` (docs/DECISIONS.md).
 */
export const userBlastRadiusRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const counts = blastRadiusReader(ctx.pool);
    app.post(
      '/api/projects/:project_id/feature_flags/user_blast_radius/',
      {
        config: { scope: 'feature_flag:read' },
        schema: {
          tags: ['feature_flags'],
          params: ProjectParams,
          body: BlastRadiusBody,
          response: { 200: BlastRadiusAnswer, ...errorResponses },
        },
      },
      async (request) => userBlastRadius(counts, projectOf(request).id, request.body, ctx.now()),
    );
  };
