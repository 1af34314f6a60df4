import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { personRefOrThrow } from '../../commands/persons/model/personRef.ts';
import { accessReader } from '../../projections/access/accessReader.ts';
import { personsReader } from '../../projections/persons/personsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ActivityQuery, activityAnswer, paginated } from '../../src/http/pagination.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { PersonActivityEntry, type PersonSelector, personActivity } from './personActivity.ts';

const ActivityPage = paginated(PersonActivityEntry)
  .extend({ total_count: z.number().int() })
  .meta({ id: 'PersonActivityPage' });
const PersonActivityQuery = ActivityQuery.extend({
  format: z
    .enum(['json', 'csv'])
    .optional()
    .describe('accepted for PostHog compatibility; the answer is JSON'),
});

/** Person activity (updated, delete_property, split_person, deleted), newest first, from the log. */
export const personActivityRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const prefix = '/api/projects/:project_id/persons';
    const config = { scope: 'activity_log:read' };
    const persons = personsReader(ctx.pool);
    const users = accessReader(ctx.pool);

    app.get(
      `${prefix}/activity/`,
      {
        config,
        schema: {
          tags: ['persons'],
          params: ProjectParams,
          querystring: PersonActivityQuery,
          response: { 200: ActivityPage, ...errorResponses },
        },
      },
      async (request) => {
        const page = await personActivity(ctx.store, users, projectOf(request).id, request.query);
        return activityAnswer(request, request.query, page);
      },
    );

    app.get(
      `${prefix}/:id/activity/`,
      {
        config,
        schema: {
          tags: ['persons'],
          params: ProjectParams.extend({ id: z.string().describe('person: integer id or uuid') }),
          querystring: PersonActivityQuery,
          response: { 200: ActivityPage, ...errorResponses },
        },
      },
      async (request) => {
        const projectId = projectOf(request).id;
        const ref = personRefOrThrow(request.params.id);
        const person = await persons.getPerson(projectId, ref);
        // A deleted person is gone from the read model; its activity stays in the log.
        const only: PersonSelector = person
          ? { personId: person.id, personUuid: person.uuid }
          : ref.kind === 'id'
            ? { personId: ref.id }
            : { personUuid: ref.uuid };
        const page = await personActivity(ctx.store, users, projectId, request.query, only);
        if (!person && page.count === 0) fail(notFound());
        return activityAnswer(request, request.query, page);
      },
    );
  };
