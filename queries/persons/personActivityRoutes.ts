import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { personRefOrThrow } from '../../commands/persons/model/personRef.ts';
import { personsReader } from '../../projections/persons/personsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { PageQuery, pageLinks, paginated } from '../../src/http/pagination.ts';
import { PersonActivityEntry, type PersonSelector, personActivity } from './personActivity.ts';

const ProjectParams = z.object({ project_id: z.string() });
const ActivityPage = paginated(PersonActivityEntry)
  .extend({ total_count: z.number().int() })
  .meta({ id: 'PersonActivityPage' });
const ActivityQuery = PageQuery.extend({ format: z.enum(['json', 'csv']).optional() });

/** Person activity (updated, delete_property, split_person, deleted), newest first, from the log. */
export const personActivityRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const prefix = '/api/projects/:project_id/persons';
    const config = { scope: 'activity_log:read' };

    app.get(
      `${prefix}/activity/`,
      {
        config,
        schema: {
          tags: ['persons'],
          params: ProjectParams,
          querystring: ActivityQuery,
          response: { 200: ActivityPage, ...errorResponses },
        },
      },
      async (request) => {
        const page = await personActivity(
          ctx.store,
          ctx.pool,
          projectOf(request).id,
          request.query,
        );
        return {
          count: page.count,
          total_count: page.count,
          ...pageLinks(request, request.query, page.count),
          results: page.results,
        };
      },
    );

    app.get(
      `${prefix}/:id/activity/`,
      {
        config,
        schema: {
          tags: ['persons'],
          params: ProjectParams.extend({ id: z.string() }),
          querystring: ActivityQuery,
          response: { 200: ActivityPage, ...errorResponses },
        },
      },
      async (request) => {
        const projectId = projectOf(request).id;
        const ref = personRefOrThrow(request.params.id);
        const person = await personsReader(ctx.pool).getPerson(projectId, ref);
        // A deleted person is gone from the read model; its activity stays in the log.
        const only: PersonSelector = person
          ? { personId: person.id, personUuid: person.uuid }
          : ref.kind === 'id'
            ? { personId: ref.id }
            : { personUuid: ref.uuid };
        const page = await personActivity(ctx.store, ctx.pool, projectId, request.query, only);
        if (!person && page.count === 0) fail(notFound());
        return {
          count: page.count,
          total_count: page.count,
          ...pageLinks(request, request.query, page.count),
          results: page.results,
        };
      },
    );
  };
