import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { forgetCachedProjectKeys } from '../../ingress/resolveProject.ts';
import { ProjectTokenView } from '../../queries/access/personalApiKeyView.ts';
import type { AppContext } from '../../src/appContext.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { requestMetadata } from '../../src/http/requestMetadata.ts';
import { accessDeps } from './accessDeps.ts';
import { resetProjectApiKey } from './resetProjectApiKey.ts';

/**
 * PATCH /api/projects/:project_id/reset_token/ (PostHog's path and method): a new project API
 * key; the old one is refused by capture, /decide and local evaluation from the next request on.
 * PostHog's project routes take the `project` scope; only an admin or the owner may reset.
 */
export const projectApiKeyRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const deps = { ...accessDeps(ctx), forgetCachedProjectKeys };
    app.patch(
      '/api/projects/:project_id/reset_token/',
      {
        config: { scope: 'project:write' },
        schema: {
          tags: ['projects'],
          description:
            'A new project API key, shown only in this answer (hogstream keeps its hash). A body, if any, is ignored.',
          params: ProjectParams,
          response: { 200: ProjectTokenView, ...errorResponses },
        },
      },
      async (request) => {
        const project = projectOf(request);
        const { projectApiKey } = await resetProjectApiKey(
          deps,
          project.id,
          project.level,
          requestMetadata(ctx, request),
        );
        return {
          id: project.id,
          name: project.name,
          access_level: project.level,
          api_token: projectApiKey,
        };
      },
    );
  };
