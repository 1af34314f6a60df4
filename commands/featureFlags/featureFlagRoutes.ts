import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { dashboardsReader } from '../../projections/dashboards/dashboardsReader.ts';
// The answers are the query side's views, read through the same readers the handlers used.
import { type FlagReaders, getFeatureFlag } from '../../queries/featureFlags/featureFlagQueries.ts';
import { FlagView } from '../../queries/featureFlags/flagView.ts';
import { getRoleAccess, RoleAccessView } from '../../queries/featureFlags/roleAccessView.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { principalOf, projectOf } from '../../src/http/apiScope.ts';
import { hardDeleteRefused } from '../../src/http/hardDeleteRefused.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { requestMetadata } from '../../src/http/requestMetadata.ts';
import { createFeatureFlag } from './createFeatureFlag.ts';
import { featureFlagDeps } from './featureFlagDeps.ts';
import { grantRoleAccess } from './grantRoleAccess.ts';
import { type FlagEditor, loadFlagEditor } from './model/canEditFlag.ts';
import { patchFeatureFlag } from './patchFeatureFlag.ts';
import { revokeRoleAccess } from './revokeRoleAccess.ts';

const writable = {
  name: z.string().optional(),
  filters: z.record(z.string(), z.unknown()).optional(),
  deleted: z.boolean().optional(),
  active: z.boolean().optional(),
  created_at: z.iso.datetime({ offset: true }).optional(),
  ensure_experience_continuity: z.boolean().optional(),
  rollback_conditions: z.unknown().optional(),
  performed_rollback: z.boolean().optional(),
  tags: z.array(z.unknown()).optional(),
  analytics_dashboards: z.array(z.number().int()).optional(),
  has_enriched_analytics: z.boolean().optional(),
};
const CreateFlagBody = z.object({ key: z.string(), ...writable }).meta({ id: 'FeatureFlagCreate' });
const PatchFlagBody = z
  .object({ key: z.string().optional(), ...writable })
  .meta({ id: 'FeatureFlagPatch' });
const FlagParams = ProjectParams.extend({
  id: z.coerce.number().int().describe('feature flag id'),
});
const RoleAccessParams = ProjectParams.extend({
  feature_flag_id: z.coerce.number().int().describe('feature flag id'),
});

const callerOf = (request: FastifyRequest) => ({
  projectId: projectOf(request).id,
  userId: principalOf(request).user.id,
  projectLevel: projectOf(request).level,
});

/** Write side of feature flags: each route parses, calls its handler and answers with the view. */
export const featureFlagCommandRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id', 'feature_flag_id']));
    const deps = featureFlagDeps(ctx);
    const readers: FlagReaders = {
      flags: deps.flags,
      access: deps.access,
      dashboards: dashboardsReader(ctx.pool),
    };
    const prefix = '/api/projects/:project_id/feature_flags';
    /** The flag as the read model shows it (the handler waited for its write); `editor` when already loaded. */
    const flagView = async (request: FastifyRequest, flagId: number, known?: FlagEditor) => {
      const { projectId, userId, projectLevel } = callerOf(request);
      const editor = known ?? (await loadFlagEditor(deps.access, userId, projectLevel));
      return (await getFeatureFlag(readers, projectId, flagId, editor)) ?? fail(notFound());
    };

    app.post(
      `${prefix}/`,
      {
        config: { scope: 'feature_flag:write' },
        schema: {
          tags: ['feature_flags'],
          params: ProjectParams,
          body: CreateFlagBody,
          response: { 201: FlagView, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { projectId, userId } = callerOf(request);
        const { flagId } = await createFeatureFlag(
          deps,
          { projectId, userId, flag: request.body },
          requestMetadata(ctx, request),
        );
        return reply.status(201).send(await flagView(request, flagId));
      },
    );

    app.patch(
      `${prefix}/:id/`,
      {
        config: { scope: 'feature_flag:write' },
        schema: {
          tags: ['feature_flags'],
          params: FlagParams,
          body: PatchFlagBody,
          response: { 200: FlagView, ...errorResponses },
        },
      },
      async (request) => {
        const { flagId, editor } = await patchFeatureFlag(
          deps,
          { ...callerOf(request), flagId: request.params.id, patch: request.body },
          requestMetadata(ctx, request),
        );
        return flagView(request, flagId, editor);
      },
    );

    // Hard deletes are refused: the only way to remove a flag is PATCH {deleted: true}.
    hardDeleteRefused(app, `${prefix}/:id/`, {
      scope: 'feature_flag:write',
      tags: ['feature_flags'],
      params: FlagParams,
      description: 'hard deletes are refused: PATCH {"deleted": true} soft-deletes',
    });

    app.post(
      `${prefix.replace('feature_flags', 'feature_flags/:feature_flag_id/role_access')}/`,
      {
        config: { scope: 'feature_flag:write' },
        schema: {
          tags: ['feature_flags'],
          params: RoleAccessParams,
          body: z.object({ role_id: z.uuid() }),
          response: { 201: RoleAccessView, ...errorResponses },
        },
      },
      async (request, reply) => {
        const caller = callerOf(request);
        const flagId = request.params.feature_flag_id;
        const { roleAccessId, editor } = await grantRoleAccess(
          deps,
          { ...caller, flagId, roleId: request.body.role_id },
          requestMetadata(ctx, request),
        );
        const view = await getRoleAccess(readers, caller.projectId, flagId, roleAccessId, editor);
        if (!view) fail(notFound());
        return reply.status(201).send(view);
      },
    );

    app.delete(
      `${prefix.replace('feature_flags', 'feature_flags/:feature_flag_id/role_access')}/:id/`,
      {
        config: { scope: 'feature_flag:write' },
        schema: {
          tags: ['feature_flags'],
          params: RoleAccessParams.extend({
            id: z.coerce.number().int().describe('role access id'),
          }),
          response: { 204: z.null().describe('No content'), ...errorResponses },
        },
      },
      async (request, reply) => {
        await revokeRoleAccess(
          deps,
          {
            ...callerOf(request),
            flagId: request.params.feature_flag_id,
            roleAccessId: request.params.id,
          },
          requestMetadata(ctx, request),
        );
        return reply.status(204).send(null);
      },
    );
  };
