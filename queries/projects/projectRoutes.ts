import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { accessReader } from '../../projections/access/accessReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { principalOf } from '../../src/http/apiScope.ts';
import { PageQuery, pageLinks, paginated } from '../../src/http/pagination.ts';

export const ProjectView = z
  .object({ id: z.number().int(), name: z.string(), access_level: z.number().int() })
  .meta({ id: 'Project' });

/** GET /api/projects/: the projects the calling key can see. */
export const projectQueryRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const access = accessReader(ctx.pool);
    app.get(
      '/api/projects/',
      {
        schema: {
          tags: ['projects'],
          querystring: PageQuery,
          response: { 200: paginated(ProjectView), ...errorResponses },
        },
      },
      async (request) => {
        const all = await access.visibleProjects(principalOf(request));
        const results = all
          .slice(request.query.offset, request.query.offset + request.query.limit)
          .map((p) => ({ id: p.id, name: p.name, access_level: p.level }));
        return { count: all.length, ...pageLinks(request, request.query, all.length), results };
      },
    );
  };
