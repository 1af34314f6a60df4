import { z } from 'zod';
import type { AccessReader } from '../../projections/access/accessReader.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ActivityQuery, activityAnswer } from '../../src/http/pagination.ts';
import { ProjectParams } from '../../src/http/params.ts';
import type { ZodApp } from '../../src/http/zodApp.ts';
import type { ActivityWindow } from './activityPage.ts';

type Users = Pick<AccessReader, 'activityUsers'>;
type Page = { count: number; results: unknown[] };

/** A page of activity as PostHog's activity endpoints answer it, a component named `id`. */
export const activityPageSchema = <T extends z.ZodType>(entry: T, id: string) =>
  z
    .object({
      count: z.number().int(),
      total_count: z.number().int(),
      next: z.string().nullable(),
      previous: z.string().nullable(),
      results: z.array(entry),
    })
    .meta({ id });

/** The params of one resource's activity: the project and the resource's integer id. */
type ResourceParams = z.ZodObject<(typeof ProjectParams)['shape'] & { id: z.ZodCoercedNumber }>;

/**
 * Registers a resource's two activity routes, `<path>/activity/` (every resource of the project)
 * and `<path>/:id/activity/` (one; 404 when not in the project), behind PostHog's
 * `activity_log:read` scope. The caller's plugin keeps its hooks (integer ids) and route order.
 */
export function activityRoutes(
  app: ZodApp,
  o: Readonly<{
    path: string;
    tags: string[];
    params: ResourceParams;
    page: z.ZodType;
    store: EventStore;
    users: Users;
    readers: {
      one: (
        store: EventStore,
        users: Users,
        projectId: number,
        id: number,
        page: ActivityWindow,
      ) => Promise<Page | undefined>;
      all: (
        store: EventStore,
        users: Users,
        projectId: number,
        page: ActivityWindow,
      ) => Promise<Page>;
    };
  }>,
) {
  const config = { scope: 'activity_log:read' };
  const response = () => ({ 200: o.page, ...errorResponses });
  app.get(
    `${o.path}/activity/`,
    {
      config,
      schema: {
        tags: o.tags,
        params: ProjectParams,
        querystring: ActivityQuery,
        response: response(),
      },
    },
    async (request) => {
      const page = await o.readers.all(o.store, o.users, projectOf(request).id, request.query);
      return activityAnswer(request, request.query, page);
    },
  );
  app.get(
    `${o.path}/:id/activity/`,
    {
      config,
      schema: { tags: o.tags, params: o.params, querystring: ActivityQuery, response: response() },
    },
    async (request) => {
      const { id } = request.params;
      const page = await o.readers.one(o.store, o.users, projectOf(request).id, id, request.query);
      if (!page) fail(notFound());
      return activityAnswer(request, request.query, page);
    },
  );
}
