import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type GroupRecord, groupsReader } from '../../projections/persons/groupsReader.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { PageQuery, pageAnswer, paginated } from '../../src/http/pagination.ts';
import { ProjectParams } from '../../src/http/params.ts';

const GroupTypeIndex = z.coerce
  .number()
  .int()
  .min(0)
  .max(4)
  .describe('the group type (0–4, see groups_types/)');

export const GroupView = z
  .object({
    group_type_index: z.number().int(),
    group_key: z.string(),
    group_properties: z.record(z.string(), z.unknown()),
    created_at: z.string(),
  })
  .meta({ id: 'Group' });

const toGroupView = (g: GroupRecord): z.infer<typeof GroupView> => ({
  group_type_index: g.group_type_index,
  group_key: g.group_key,
  group_properties: g.group_properties,
  created_at: new Date(g.created_at).toISOString(),
});

const read = { scope: 'group:read' } as const;

/** PostHog's groups list and lookup, from the groups the persons projection keeps. */
export const groupQueryRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const groups = groupsReader(ctx.pool);
    const caughtUp = () => awaitNewest(ctx, personsProjection.filter, personsProjection);

    app.get(
      '/api/projects/:project_id/groups/',
      {
        config: read,
        schema: {
          tags: ['groups'],
          summary: 'Groups of one type, newest first; search on the key or the name property',
          params: ProjectParams,
          querystring: PageQuery.extend({
            group_type_index: GroupTypeIndex,
            search: z
              .string()
              .max(1000)
              .optional()
              .describe('text the group key or its `name` property contains (any case)'),
          }),
          response: { 200: paginated(GroupView), ...errorResponses },
        },
      },
      async (request) => {
        await caughtUp();
        const q = request.query;
        const page = await groups.list(projectOf(request).id, q.group_type_index, q.search, q);
        return pageAnswer(request, q, { count: page.count, results: page.rows.map(toGroupView) });
      },
    );

    app.get(
      '/api/projects/:project_id/groups/find/',
      {
        config: read,
        schema: {
          tags: ['groups'],
          summary: 'One group by type and key',
          params: ProjectParams,
          querystring: z.object({
            group_type_index: GroupTypeIndex,
            group_key: z.string().min(1).max(1000).describe('the group key'),
          }),
          response: { 200: GroupView, ...errorResponses },
        },
      },
      async (request) => {
        await caughtUp();
        const q = request.query;
        const group = await groups.find(projectOf(request).id, q.group_type_index, q.group_key);
        if (!group) fail(notFound());
        return toGroupView(group);
      },
    );
  };
