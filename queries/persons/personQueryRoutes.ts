import { stringify } from 'csv-stringify/sync';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { personRefOrThrow } from '../../commands/persons/model/personRef.ts';
import { PersonView, toPersonView } from '../../commands/persons/model/personView.ts';
import { personWhere } from '../../projections/persons/personFilters.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import { personsReader } from '../../projections/persons/personsReader.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { fail, notFound, validation } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { pageLinks, paginated } from '../../src/http/pagination.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { AsOfQuery, answerPersonAsOf } from '../personTimeTravel/personTimeTravelRoutes.ts';
import { csvCast } from '../shared/csvCells.ts';
import { csvHeader, csvRow, personsCsvStream } from './personsCsv.ts';

export const MAX_LIMIT = 1000;
export const CSV_DEFAULT_LIMIT = 10_000;
export const CSV_MAX_LIMIT = 100_000;

const Format = z.enum(['json', 'csv']).optional().describe('csv: a CSV file instead of JSON');
const ListQuery = z.object({
  distinct_id: z.string().optional().describe('the person owning this distinct id'),
  email: z.string().optional().describe('exact match on properties.email'),
  search: z
    .string()
    .optional()
    .describe(
      'properties.email contains it (case-insensitive), or an exact distinct id, or the person uuid',
    ),
  properties: z
    .string()
    .optional()
    .describe(
      'JSON list of person property filters [{key, value, operator, type: "person"}], or an AND/OR group',
    ),
  cohort: z.coerce
    .number()
    .int()
    .min(1)
    .max(2_147_483_647)
    .optional()
    .describe('only the persons of this cohort (an unknown cohort: none)'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      `default 100, at most ${MAX_LIMIT} (CSV: default ${CSV_DEFAULT_LIMIT}, at most ${CSV_MAX_LIMIT}); more: 400`,
    ),
  offset: z.coerce.number().int().min(0).default(0).describe('results to skip'),
  include_total: z.string().optional().describe('accepted; count is always included'),
  format: Format,
});
const PersonsPage = paginated(PersonView).meta({ id: 'PersonsPage' });
const PropertyValues = z
  .array(z.object({ name: z.string(), count: z.number().int() }))
  .meta({ id: 'PersonPropertyValues' });
const GroupType = z
  .object({
    group_type: z.string(),
    group_type_index: z.number().int(),
    name_singular: z.string().nullable(),
    name_plural: z.string().nullable(),
  })
  .meta({ id: 'GroupType' });

export function parseProperties(raw: string | undefined): unknown {
  if (raw === undefined || raw.trim() === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    fail(
      validation(
        'invalid_input',
        'properties must be JSON: a list of property filters',
        'properties',
      ),
    );
  }
}

const csvType = (reply: FastifyReply) => reply.type('text/csv; charset=utf-8');

/**
 * The persons read model over HTTP (api-spec "Persons", capture.md §4.1): list with filters and
 * CSV export, one person by integer id or uuid, property values, and PostHog's groups_types list.
 * Every route first waits (bounded) for the persons projection to reach the newest person-relevant
 * event of the log, so what was captured before the request is visible.
 */
export const personQueryRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const prefix = '/api/projects/:project_id/persons';
    const read = { scope: 'person:read' };
    const persons = personsReader(ctx.pool);
    const caughtUp = () => awaitNewest(ctx, personsProjection.filter, personsProjection);

    app.get(
      `${prefix}/`,
      {
        config: { ...read, openapi: { csv: true } },
        schema: {
          tags: ['persons'],
          summary: 'List persons, newest first, with filters; format=csv exports them',
          params: ProjectParams,
          querystring: ListQuery,
          response: { 200: PersonsPage.describe('text/csv with format=csv'), ...errorResponses },
        },
      },
      async (request, reply) => {
        const q = request.query;
        const csv = q.format === 'csv';
        const max = csv ? CSV_MAX_LIMIT : MAX_LIMIT;
        // a 400, not a clamp: a clamped page is shorter than asked, and a client stopping at a
        // short page (Airbyte's connector) would take it for the end of the list
        if (q.limit !== undefined && q.limit > max)
          fail(
            validation(
              'invalid_input',
              `limit is at most ${max}${csv ? ' with format=csv' : ''}: ask for less and follow next`,
              'limit',
            ),
          );
        const limit = q.limit ?? (csv ? CSV_DEFAULT_LIMIT : 100);
        const input = {
          projectId: projectOf(request).id,
          now: ctx.now(),
          distinctId: q.distinct_id,
          email: q.email,
          search: q.search,
          properties: parseProperties(q.properties),
          cohortId: q.cohort,
        };
        const where = personWhere(input);
        await caughtUp();
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

    app.get(
      `${prefix}/values/`,
      {
        config: read,
        schema: {
          tags: ['persons'],
          summary: 'Values of a person property, most frequent first',
          params: ProjectParams,
          querystring: z.object({
            key: z.string().min(1).describe('person property key'),
            value: z.string().optional().describe('only values containing this (case-insensitive)'),
            limit: z.coerce
              .number()
              .int()
              .min(1)
              .max(1000)
              .default(100)
              .describe('values (1–1000)'),
            format: Format,
          }),
          response: { 200: PropertyValues, ...errorResponses },
        },
      },
      async (request, reply) => {
        const q = request.query;
        await caughtUp();
        const values = await persons.propertyValues(projectOf(request).id, q.key, q.value, q.limit);
        if (q.format === 'csv')
          return csvType(reply).send(
            stringify([['name', 'count'], ...values.map((v) => [v.name, String(v.count)])], {
              cast: csvCast,
            }),
          );
        return values;
      },
    );

    app.get(
      `${prefix}/:id/`,
      {
        config: read,
        schema: {
          tags: ['persons'],
          summary: 'One person by integer id or uuid',
          params: ProjectParams.extend({ id: z.string().describe('person: integer id or uuid') }),
          querystring: z.object({ format: Format, as_of: AsOfQuery.optional() }),
          response: { 200: PersonView, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        const ref = personRefOrThrow(id);
        if (request.query.as_of !== undefined)
          return answerPersonAsOf(ctx, projectOf(request).id, id, request.query.as_of); // time travel, from the log
        await caughtUp();
        const person = await persons.getPerson(projectOf(request).id, ref);
        if (!person) fail(notFound());
        if (request.query.format === 'csv') {
          const keys = Object.keys(person.properties).sort();
          return csvType(reply).send(
            stringify([csvHeader(keys), csvRow(person, keys)], { cast: csvCast }),
          );
        }
        return toPersonView(person);
      },
    );

    app.get(
      '/api/projects/:project_id/groups_types/',
      {
        config: { scope: 'group:read' },
        schema: {
          tags: ['groups'],
          summary: 'Group types of the project and their indexes (0-4), in index order',
          params: ProjectParams,
          response: { 200: z.array(GroupType), ...errorResponses },
        },
      },
      async (request) => {
        await caughtUp();
        const types = await persons.groupTypes(projectOf(request).id);
        return types.map((t) => ({ ...t, name_singular: null, name_plural: null }));
      },
    );
  };
