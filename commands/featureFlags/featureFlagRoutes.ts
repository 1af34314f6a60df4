import { featureFlagsProjection } from '../../projections/featureFlags/featureFlagsProjection.ts';
import { principalOf, projectOf } from '../../src/http/apiScope.ts';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type AppContext, nextId } from '../../src/appContext.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import { requestMetadata } from '../../src/http/requestMetadata.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import { getFeatureFlag, isFlagKeyTaken } from '../../queries/featureFlags/featureFlagQueries.ts';
import { FlagView } from '../../queries/featureFlags/flagView.ts';
import { getRoleAccess, RoleAccessView, roleExists } from '../../queries/featureFlags/roleAccessView.ts';
import { type FlagFields, featureFlagStream } from './featureFlag.ts';
import { featureFlagDecider } from './featureFlagDecider.ts';
import { normalizeFlagFilters } from './flagFilters.ts';
import { withFlagKeyLock } from './flagKeyLock.ts';
import { loadFlagEditor } from './loadFlagEditor.ts';
import type { FlagEditor } from './canEditFlag.ts';

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
const PatchFlagBody = z.object({ key: z.string().optional(), ...writable }).meta({ id: 'FeatureFlagPatch' });
const ProjectParams = z.object({ project_id: z.string() });
const FlagParams = ProjectParams.extend({ id: z.coerce.number().int() });
const RoleAccessParams = ProjectParams.extend({ feature_flag_id: z.coerce.number().int() });

const caller = (request: FastifyRequest) => ({ user: principalOf(request).user, project: projectOf(request) });

const pickFields = (body: z.infer<typeof PatchFlagBody>): Partial<FlagFields> =>
  Object.fromEntries(Object.entries(body).filter(([k, v]) => v !== undefined && k !== 'deleted' && k !== 'created_at'));

/** Write side of feature flags: each route parses, looks up the facts the decider needs, decides, appends. */
export const featureFlagCommandRoutes = (ctx: AppContext): FastifyPluginAsync => async (base) => {
  const app = base.withTypeProvider<ZodTypeProvider>();
  const prefix = '/api/projects/:project_id/feature_flags';
  /** The flag as the read model shows it once it has applied `position`; `editor` when already loaded. */
  const respond = async (request: FastifyRequest, flagId: number, position: bigint | undefined, known?: FlagEditor) => {
    const { user, project } = caller(request);
    await ctx.awaitProjection(featureFlagsProjection, position);
    const editor = known ?? (await loadFlagEditor(ctx.pool, user.id, project.level));
    const view = await getFeatureFlag(ctx.pool, project.id, flagId, editor);
    if (!view) fail(notFound());
    return view;
  };

  app.post(`${prefix}/`, {
    config: { scope: 'feature_flag:write' },
    schema: { tags: ['feature_flags'], params: ProjectParams, body: CreateFlagBody, response: { 201: FlagView, ...errorResponses } },
  }, async (request, reply) => {
    const { user, project } = caller(request);
    const body = request.body;
    const flagId = await nextId(ctx.pool, 'feature_flag');
    const fields: FlagFields = {
      name: body.name ?? '',
      key: body.key,
      filters: body.filters ?? normalizeFlagFilters(undefined),
      active: body.active ?? true,
      ensure_experience_continuity: body.ensure_experience_continuity ?? false,
      rollback_conditions: body.rollback_conditions ?? null,
      performed_rollback: body.performed_rollback ?? false,
      tags: body.tags ?? [],
      analytics_dashboards: body.analytics_dashboards ?? [],
      has_enriched_analytics: body.has_enriched_analytics ?? false,
    };
    const key = body.key.trim();
    // The uniqueness check, the append and its projection happen under the key's lock.
    const result = await withFlagKeyLock(ctx.pool, project.id, key, async () => {
      const handled = await handleCommand(ctx.store, featureFlagStream(flagId), featureFlagDecider, {
        type: 'CreateFeatureFlag',
        flagId,
        projectId: project.id,
        fields,
        deleted: body.deleted ?? false,
        createdAt: body.created_at ? new Date(body.created_at).toISOString() : ctx.now().toISOString(),
        createdByUserId: user.id,
        keyTaken: await isFlagKeyTaken(ctx.pool, project.id, key),
      }, requestMetadata(ctx, request));
      await ctx.awaitProjection(featureFlagsProjection, handled.position);
      return handled;
    });
    return reply.status(201).send(await respond(request, flagId, result.position));
  });

  app.patch(`${prefix}/:id/`, {
    config: { scope: 'feature_flag:write' },
    schema: { tags: ['feature_flags'], params: FlagParams, body: PatchFlagBody, response: { 200: FlagView, ...errorResponses } },
  }, async (request) => {
    const { user, project } = caller(request);
    const flagId = request.params.id;
    const editor = await loadFlagEditor(ctx.pool, user.id, project.level);
    const current = await getFeatureFlag(ctx.pool, project.id, flagId, editor);
    if (!current) fail(notFound());
    const changes = { ...pickFields(request.body), ...(request.body.deleted !== undefined ? { deleted: request.body.deleted } : {}) };
    const key = (request.body.key ?? current.key).trim();
    const patch = async () => {
      const handled = await handleCommand(ctx.store, featureFlagStream(flagId), featureFlagDecider, {
        type: 'PatchFeatureFlag',
        projectId: project.id,
        changes,
        editor,
        keyTaken: await isFlagKeyTaken(ctx.pool, project.id, key, flagId),
      }, requestMetadata(ctx, request));
      await ctx.awaitProjection(featureFlagsProjection, handled.position);
      return handled;
    };
    // A rename or a restore claims a key: it runs under that key's lock, like a create.
    const claimsKey = request.body.key !== undefined || request.body.deleted === false;
    const result = claimsKey ? await withFlagKeyLock(ctx.pool, project.id, key, patch) : await patch();
    return respond(request, flagId, result.position, editor);
  });

  // Hard deletes are refused: the only way to remove a flag is PATCH {deleted: true}.
  app.delete(`${prefix}/:id/`, {
    config: { scope: 'feature_flag:write' },
    schema: { tags: ['feature_flags'], params: FlagParams, response: {} },
  }, async (_request, reply) => reply.status(405).send());

  app.post(`${prefix.replace('feature_flags', 'feature_flags/:feature_flag_id/role_access')}/`, {
    config: { scope: 'feature_flag:write' },
    schema: {
      tags: ['feature_flags'],
      params: RoleAccessParams,
      body: z.object({ role_id: z.uuid() }),
      response: { 201: RoleAccessView, ...errorResponses },
    },
  }, async (request, reply) => {
    const { user, project } = caller(request);
    const flagId = request.params.feature_flag_id;
    const editor = await loadFlagEditor(ctx.pool, user.id, project.level);
    const roleAccessId = await nextId(ctx.pool, 'role_access');
    // One spelling per role: Postgres prints uuids in lower case, and the decider compares strings.
    const roleId = request.body.role_id.toLowerCase();
    const result = await handleCommand(ctx.store, featureFlagStream(flagId), featureFlagDecider, {
      type: 'GrantRoleAccess',
      projectId: project.id,
      roleAccessId,
      roleId,
      roleExists: await roleExists(ctx.pool, roleId),
      editor,
      at: ctx.now().toISOString(),
    }, requestMetadata(ctx, request));
    await ctx.awaitProjection(featureFlagsProjection, result.position);
    const view = await getRoleAccess(ctx.pool, project.id, flagId, roleAccessId, editor);
    if (!view) fail(notFound());
    return reply.status(201).send(view);
  });

  app.delete(`${prefix.replace('feature_flags', 'feature_flags/:feature_flag_id/role_access')}/:id/`, {
    config: { scope: 'feature_flag:write' },
    schema: {
      tags: ['feature_flags'],
      params: RoleAccessParams.extend({ id: z.coerce.number().int() }),
      response: { 204: z.null().describe('No content'), ...errorResponses },
    },
  }, async (request, reply) => {
    const { user, project } = caller(request);
    const editor = await loadFlagEditor(ctx.pool, user.id, project.level);
    const result = await handleCommand(ctx.store, featureFlagStream(request.params.feature_flag_id), featureFlagDecider, {
      type: 'RevokeRoleAccess',
      projectId: project.id,
      roleAccessId: request.params.id,
      editor,
    }, requestMetadata(ctx, request));
    await ctx.awaitProjection(featureFlagsProjection, result.position);
    return reply.status(204).send(null);
  });
};
