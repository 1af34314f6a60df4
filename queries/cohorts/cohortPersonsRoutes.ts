import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PersonView, toPersonView } from '../../commands/persons/model/personView.ts';
import { cohortsProjection } from '../../projections/cohorts/cohortsProjection.ts';
import { cohortsReader } from '../../projections/cohorts/cohortsReader.ts';
import { personWhere } from '../../projections/persons/personFilters.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import { personsReader } from '../../projections/persons/personsReader.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { fail, forbidden, invalidInput, notFound } from '../../src/core/errors.ts';
import { hasScope } from '../../src/core/principal.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { principalOf, projectOf } from '../../src/http/apiScope.ts';
import { notFoundUnlessIntegerIds } from '../../src/http/integerIds.ts';
import { pageLinks, paginated } from '../../src/http/pagination.ts';
import {
  CSV_DEFAULT_LIMIT,
  CSV_MAX_LIMIT,
  MAX_LIMIT,
  parseProperties,
} from '../persons/personQueryRoutes.ts';
import { personsCsvStream } from '../persons/personsCsv.ts';
import { CohortParams } from './cohortQueryRoutes.ts';

const CohortPersonsQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      `default 100, at most ${MAX_LIMIT} (CSV: default ${CSV_DEFAULT_LIMIT}, at most ${CSV_MAX_LIMIT}); more: 400`,
    ),
  offset: z.coerce.number().int().min(0).default(0).describe('persons to skip'),
  properties: z
    .string()
    .optional()
    .describe('JSON list of person property filters, as the persons list takes them'),
  format: z.enum(['json', 'csv']).optional().describe('csv: a CSV file instead of JSON'),
});

const csvType = (reply: FastifyReply) => reply.type('text/csv; charset=utf-8');

/**
 * `cohorts/:id/persons/`: the persons a cohort holds (a static cohort's, a dynamic one's last
 * calculation), newest first, a page at a time, as PostHog answers it (`results`, `next`,
 * `previous`; `count` besides). PostHog needs `cohort:read` and `person:read`: so does this.
 */
export const cohortPersonsRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.addHook('preValidation', notFoundUnlessIntegerIds(['id']));
    const cohorts = cohortsReader(ctx.pool);
    const persons = personsReader(ctx.pool);
    app.get(
      '/api/projects/:project_id/cohorts/:id/persons/',
      {
        config: { scope: 'cohort:read', openapi: { csv: true } },
        schema: {
          tags: ['cohorts', 'persons'],
          summary: 'The persons of a cohort, newest first (needs person:read too)',
          params: CohortParams,
          querystring: CohortPersonsQuery,
          response: {
            200: paginated(PersonView).describe('text/csv with format=csv'),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        if (!hasScope(principalOf(request).scopes, 'person:read'))
          fail(forbidden("API key missing required scope 'person:read'"));
        const q = request.query;
        const projectId = projectOf(request).id;
        await awaitNewest(ctx, cohortsProjection.filter, cohortsProjection);
        if (!(await cohorts.get(projectId, request.params.id))) fail(notFound());
        const csv = q.format === 'csv';
        const max = csv ? CSV_MAX_LIMIT : MAX_LIMIT;
        // a 400, not a clamp, as the persons list: a client stopping at a short page reads all
        if (q.limit !== undefined && q.limit > max)
          fail(invalidInput(`limit is at most ${max}: ask for less and follow next`, 'limit'));
        const limit = q.limit ?? (csv ? CSV_DEFAULT_LIMIT : 100);
        const where = personWhere({
          projectId,
          now: ctx.now(),
          properties: parseProperties(q.properties),
          cohortId: request.params.id,
        });
        await awaitNewest(ctx, personsProjection.filter, personsProjection);
        if (csv)
          return csvType(reply).send(await personsCsvStream(persons, where, limit, q.offset));
        const page = await persons.listPersons(where, { limit, offset: q.offset });
        return {
          count: page.count,
          ...pageLinks(request, { limit, offset: q.offset }, page.count),
          results: page.results.map(toPersonView),
        };
      },
    );
  };
