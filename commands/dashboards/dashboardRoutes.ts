import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DashboardParams } from '../../queries/dashboards/dashboardQueryRoutes.ts';
import { DashboardView, dashboardView } from '../../queries/dashboards/dashboardView.ts';
import type { AppContext } from '../../src/appContext.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { principalOf, projectOf } from '../../src/http/apiScope.ts';
import { hardDeleteRefused } from '../../src/http/hardDeleteRefused.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { requestMetadata } from '../../src/http/requestMetadata.ts';
import { createDashboard, patchDashboard } from './userDashboardHandlers.ts';

const writable = {
  name: z.string().max(400),
  description: z.string().max(10_000).optional(),
  pinned: z.boolean().optional(),
  filters: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('dashboard filters: kept as sent, not applied to the tiles here'),
  tags: z.array(z.unknown()).optional().describe('ignored: tags are not kept'),
};
const CreateBody = z.object(writable).meta({ id: 'DashboardCreate' });
const PatchBody = z
  .object({
    ...writable,
    name: writable.name.optional(),
    deleted: z.boolean().optional().describe('true soft-deletes the dashboard and its tiles'),
  })
  .meta({ id: 'DashboardPatch' });

/** Write side of dashboards users make: create, patch, soft delete (issue #28). */
export const dashboardCommandRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const prefix = '/api/projects/:project_id/dashboards';
    const write = { scope: 'dashboard:write' };

    app.post(
      `${prefix}/`,
      {
        config: write,
        schema: {
          tags: ['dashboards'],
          params: ProjectParams,
          body: CreateBody,
          response: { 201: DashboardView, ...errorResponses },
        },
      },
      async (request, reply) => {
        const b = request.body;
        const projectId = projectOf(request).id;
        const { dashboardId } = await createDashboard(
          ctx,
          {
            projectId,
            userId: principalOf(request).user.id,
            fields: {
              name: b.name,
              description: b.description ?? '',
              pinned: b.pinned ?? false,
              filters: b.filters ?? {},
            },
          },
          requestMetadata(ctx, request),
        );
        return reply.status(201).send(await dashboardView(ctx, undefined, projectId, dashboardId));
      },
    );

    app.patch(
      `${prefix}/:id/`,
      {
        config: write,
        schema: {
          tags: ['dashboards'],
          params: DashboardParams,
          body: PatchBody,
          response: { 200: DashboardView, ...errorResponses },
        },
      },
      async (request) => {
        const { tags: _tags, ...changes } = request.body;
        const projectId = projectOf(request).id;
        await patchDashboard(
          ctx,
          { dashboardId: request.params.id, projectId, changes },
          requestMetadata(ctx, request),
        );
        return dashboardView(
          ctx,
          undefined,
          projectId,
          request.params.id,
          changes.deleted === true,
        );
      },
    );

    hardDeleteRefused(app, `${prefix}/:id/`, {
      scope: write.scope,
      tags: ['dashboards'],
      params: DashboardParams,
      description: 'hard deletes are refused: PATCH {"deleted": true} soft-deletes',
    });
  };
