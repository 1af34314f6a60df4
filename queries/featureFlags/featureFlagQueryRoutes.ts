import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { FlagEditor } from '../../commands/featureFlags/model/canEditFlag.ts';
import { loadFlagEditor } from '../../commands/featureFlags/model/canEditFlag.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, notFound, validation } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { principalOf, projectOf } from '../../src/http/apiScope.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { PageQuery, pageAnswer, paginated } from '../../src/http/pagination.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { activityRoutes } from '../shared/activityRoutes.ts';
import {
  type FlagReaders,
  flagReaders,
  getFeatureFlag,
  listFeatureFlags,
  toFlagViews,
} from './featureFlagQueries.ts';
import { ActivityEntry, allFlagsActivity, flagActivity } from './flagActivity.ts';
import { flagAsOf } from './flagAsOf.ts';
import { FlagView } from './flagView.ts';
import { getRoleAccess, listRoleAccess, RoleAccessView } from './roleAccessView.ts';

const FlagParams = ProjectParams.extend({
  id: z.coerce.number().int().describe('feature flag id'),
});
const FlagAsOfQuery = z
  .string()
  .describe(
    'ISO 8601 time: the flag as it was then, from its stream (the last change recorded at or before it); 404 if it did not exist yet',
  );
const RoleAccessParams = ProjectParams.extend({
  feature_flag_id: z.coerce.number().int().describe('feature flag id'),
});
const ActivityPage = paginated(ActivityEntry).extend({ total_count: z.number().int() });

const editorOf = (readers: FlagReaders, request: FastifyRequest) =>
  loadFlagEditor(readers.access, principalOf(request).user.id, projectOf(request).level);

/** Read side of feature flags: every route reads a read model, or the flag streams for activity. */
export const featureFlagQueryRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id', 'feature_flag_id']));
    const readers = flagReaders(ctx.pool);
    /** Role access lives under a flag: a flag the project does not have is a 404 first. */
    const requireFlag = async (flagId: number, projectId: number, editor: FlagEditor) => {
      if (!(await getFeatureFlag(readers, projectId, flagId, editor))) fail(notFound());
    };
    const prefix = '/api/projects/:project_id/feature_flags';
    const read = { scope: 'feature_flag:read' };

    app.get(
      `${prefix}/`,
      {
        config: read,
        schema: {
          tags: ['feature_flags'],
          params: ProjectParams,
          querystring: PageQuery,
          response: { 200: paginated(FlagView), ...errorResponses },
        },
      },
      async (request) => {
        const page = await listFeatureFlags(
          readers,
          projectOf(request).id,
          request.query,
          await editorOf(readers, request),
        );
        return pageAnswer(request, request.query, page);
      },
    );

    app.get(
      `${prefix}/:id/`,
      {
        config: read,
        schema: {
          tags: ['feature_flags'],
          params: FlagParams,
          querystring: z.object({ as_of: FlagAsOfQuery.optional() }),
          response: { 200: FlagView, ...errorResponses },
        },
      },
      async (request) => {
        const projectId = projectOf(request).id;
        const editor = await editorOf(readers, request);
        const asOf = request.query.as_of;
        if (asOf === undefined) {
          const flag = await getFeatureFlag(readers, projectId, request.params.id, editor);
          if (!flag) fail(notFound());
          return flag;
        }
        const at = new Date(asOf);
        if (asOf.trim() === '' || Number.isNaN(at.getTime()))
          fail(validation('invalid_input', `as_of: invalid date "${asOf}"`, 'as_of'));
        // From the flag's stream, not the read model: the flag as it was then.
        const row = await flagAsOf(ctx.store, projectId, request.params.id, at);
        if (!row) fail(notFound());
        return (await toFlagViews(readers, [row], editor))[0]!;
      },
    );

    app.get(
      `${prefix}/:feature_flag_id/role_access/`,
      {
        config: read,
        schema: {
          tags: ['feature_flags'],
          params: RoleAccessParams,
          querystring: PageQuery,
          response: { 200: paginated(RoleAccessView), ...errorResponses },
        },
      },
      async (request) => {
        const editor = await editorOf(readers, request);
        await requireFlag(request.params.feature_flag_id, projectOf(request).id, editor);
        const page = await listRoleAccess(
          readers,
          projectOf(request).id,
          request.params.feature_flag_id,
          request.query,
          editor,
        );
        return pageAnswer(request, request.query, page);
      },
    );

    app.get(
      `${prefix}/:feature_flag_id/role_access/:id/`,
      {
        config: read,
        schema: {
          tags: ['feature_flags'],
          params: RoleAccessParams.extend({
            id: z.coerce.number().int().describe('role access id'),
          }),
          response: { 200: RoleAccessView, ...errorResponses },
        },
      },
      async (request) => {
        const editor = await editorOf(readers, request);
        await requireFlag(request.params.feature_flag_id, projectOf(request).id, editor);
        const view = await getRoleAccess(
          readers,
          projectOf(request).id,
          request.params.feature_flag_id,
          request.params.id,
          editor,
        );
        if (!view) fail(notFound());
        return view;
      },
    );

    activityRoutes(app, {
      path: prefix,
      tags: ['feature_flags'],
      params: FlagParams,
      page: ActivityPage,
      store: ctx.store,
      users: readers.access,
      readers: { one: flagActivity, all: allFlagsActivity },
    });
  };
