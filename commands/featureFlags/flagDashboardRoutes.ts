import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { dashboardsReader } from '../../projections/dashboards/dashboardsReader.ts';
import { type FlagReaders, getFeatureFlag } from '../../queries/featureFlags/featureFlagQueries.ts';
import { FlagView } from '../../queries/featureFlags/flagView.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { principalOf, projectOf } from '../../src/http/apiScope.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { requestMetadata } from '../../src/http/requestMetadata.ts';
import { createUsageDashboard, enrichUsageDashboard } from '../dashboards/usageDashboard.ts';
import { featureFlagDeps } from './featureFlagDeps.ts';
import { loadFlagEditor } from './model/canEditFlag.ts';

const FlagParams = ProjectParams.extend({
  id: z.coerce.number().int().describe('feature flag id'),
});

/**
 * The flag's usage dashboard (issue #10): `dashboard/` creates it (once), `enrich_usage_dashboard/`
 * adds the enriched tiles; both answer the flag, whose `usage_dashboard` names it.
 */
export const flagDashboardRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const deps = featureFlagDeps(ctx);
    const readers: FlagReaders = {
      flags: deps.flags,
      access: deps.access,
      dashboards: dashboardsReader(ctx.pool),
    };
    const flagOf = async (request: FastifyRequest, flagId: number) => {
      const project = projectOf(request);
      const editor = await loadFlagEditor(deps.access, principalOf(request).user.id, project.level);
      return (await getFeatureFlag(readers, project.id, flagId, editor)) ?? fail(notFound());
    };
    const schema = (summary: string) => ({
      tags: ['feature_flags'],
      summary,
      params: FlagParams,
      body: z.unknown().optional().describe('ignored'),
      response: { 200: FlagView, ...errorResponses },
    });
    const prefix = '/api/projects/:project_id/feature_flags/:id';

    app.post(
      `${prefix}/dashboard/`,
      {
        config: { scope: 'feature_flag:write' },
        schema: schema('Create the flag’s usage dashboard (once)'),
      },
      async (request) => {
        const flag = await flagOf(request, request.params.id);
        if (flag.deleted) fail(notFound());
        await createUsageDashboard(
          ctx,
          {
            projectId: projectOf(request).id,
            flagId: flag.id,
            flagKey: flag.key,
            userId: principalOf(request).user.id,
          },
          requestMetadata(ctx, request),
        );
        return flagOf(request, flag.id);
      },
    );

    app.post(
      `${prefix}/enrich_usage_dashboard/`,
      {
        config: { scope: 'feature_flag:write' },
        schema: schema('Add the enriched tiles to the flag’s usage dashboard'),
      },
      async (request) => {
        const flag = await flagOf(request, request.params.id);
        if (flag.deleted) fail(notFound());
        await enrichUsageDashboard(
          ctx,
          { projectId: projectOf(request).id, flagId: flag.id, flagKey: flag.key },
          requestMetadata(ctx, request),
        );
        return flagOf(request, flag.id);
      },
    );
  };
