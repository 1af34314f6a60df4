import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { accessReader } from '../../projections/access/accessReader.ts';
import { actionsProjection } from '../../projections/actions/actionsProjection.ts';
import { actionsReader } from '../../projections/actions/actionsReader.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { pageAnswer, paginated } from '../../src/http/pagination.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { activityPageSchema, activityRoutes } from '../shared/activityRoutes.ts';
import { ActionActivityEntry, actionActivity, allActionsActivity } from './actionActivity.ts';
import { ActionView, actionViews } from './actionView.ts';

export const ActionParams = ProjectParams.extend({
  id: z.coerce.number().int().describe('action id'),
});

/**
 * PostHog answers every action in one `{results}`; here the list is paged, with a page large
 * enough for PostHog's clients to get every action of a project in the first one.
 */
export const ACTIONS_DEFAULT_LIMIT = 1000;
export const ACTIONS_MAX_LIMIT = 10_000;
const ActionListQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(ACTIONS_MAX_LIMIT)
    .default(ACTIONS_DEFAULT_LIMIT)
    .describe(`page size (default ${ACTIONS_DEFAULT_LIMIT}, at most ${ACTIONS_MAX_LIMIT})`),
  offset: z.coerce.number().int().min(0).default(0).describe('results to skip'),
});

/** Read side of actions: the list (by name, deleted hidden), one action, activity. */
export const actionQueryRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const actions = actionsReader(ctx.pool);
    const users = accessReader(ctx.pool);
    const caughtUp = () => awaitNewest(ctx, actionsProjection.filter, actionsProjection);
    const read = { scope: 'action:read' };
    const tags = ['actions'];

    app.get(
      '/api/projects/:project_id/actions/',
      {
        config: read,
        schema: {
          tags,
          params: ProjectParams,
          querystring: ActionListQuery,
          response: { 200: paginated(ActionView), ...errorResponses },
        },
      },
      async (request) => {
        await caughtUp();
        const page = await actions.list(projectOf(request).id, request.query);
        return pageAnswer(request, request.query, {
          count: page.count,
          results: await actionViews(users, page.rows),
        });
      },
    );

    app.get(
      '/api/projects/:project_id/actions/:id/',
      {
        config: read,
        schema: { tags, params: ActionParams, response: { 200: ActionView, ...errorResponses } },
      },
      async (request) => {
        await caughtUp();
        const row = await actions.get(projectOf(request).id, request.params.id);
        if (!row) fail(notFound());
        return (await actionViews(users, [row]))[0]!;
      },
    );

    activityRoutes(app, {
      path: '/api/projects/:project_id/actions',
      tags,
      params: ActionParams,
      page: activityPageSchema(ActionActivityEntry, 'ActionActivityPage'),
      store: ctx.store,
      users,
      readers: { one: actionActivity, all: allActionsActivity },
    });
  };
