import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput, notFound, required } from '../../src/core/errors.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { requestMetadata } from '../../src/http/requestMetadata.ts';
import { deletePerson } from './deletePerson.ts';
import { deletePersonProperty } from './deletePersonProperty.ts';
import { personRefOrThrow } from './model/personRef.ts';
import { PersonView, toPersonView } from './model/personView.ts';
import { type PersonTarget, personDeps } from './personCommand.ts';
import { splitPerson } from './splitPerson.ts';
import { updatePersonProperties } from './updatePersonProperties.ts';

const PersonParams = ProjectParams.extend({
  id: z.string().describe("the person's integer id or its uuid"),
});
const Format = z
  .enum(['json', 'csv'])
  .optional()
  .describe('accepted for PostHog compatibility; the answer is JSON');

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off', '']);
function booleanParam(raw: string | undefined, name: string): boolean {
  if (raw === undefined || FALSE.has(raw.toLowerCase())) return false;
  if (TRUE.has(raw.toLowerCase())) return true;
  fail(invalidInput('Must be a valid boolean.', name));
}

/**
 * Write side of persons over HTTP: each route parses, calls its handler (which waits until the
 * read models show the write) and answers with the person as the persons reader now shows it.
 */
export const personCommandRoutes =
  (ctx: AppContext): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const deps = personDeps(ctx);
    const prefix = '/api/projects/:project_id/persons/:id';
    const write = { scope: 'person:write' };
    const response = { 200: PersonView, ...errorResponses };

    const target = (request: FastifyRequest, id: string): PersonTarget => ({
      projectId: projectOf(request).id,
      ref: personRefOrThrow(id),
    });
    const answer = async (projectId: number, personId: number): Promise<PersonView> => {
      const person = await deps.persons.getPerson(projectId, { kind: 'id', id: personId });
      if (!person) fail(notFound());
      return toPersonView(person);
    };

    app.patch(
      `${prefix}/`,
      {
        config: write,
        schema: {
          tags: ['persons'],
          params: PersonParams,
          querystring: z.object({ format: Format }),
          body: z
            .object({
              properties: z
                .record(z.string(), z.unknown())
                .describe('properties to set (others are kept)'),
            })
            .meta({ id: 'PersonPatch' }),
          response,
        },
      },
      async (request) => {
        const input = { ...target(request, request.params.id), set: request.body.properties };
        const { personId } = await updatePersonProperties(
          deps,
          input,
          requestMetadata(ctx, request),
        );
        return answer(input.projectId, personId);
      },
    );

    app.post(
      `${prefix}/update_property/`,
      {
        config: write,
        schema: {
          tags: ['persons'],
          params: PersonParams,
          querystring: z.object({
            key: z.string().optional().describe('the property (or in the body)'),
            value: z.string().optional().describe('its new value (or in the body)'),
            format: Format,
          }),
          body: z.object({ key: z.string().optional(), value: z.unknown().optional() }).nullish(),
          response,
        },
      },
      async (request) => {
        const body = request.body ?? {};
        const key = body.key ?? request.query.key;
        if (key === undefined || key === '') fail(required('key'));
        const value = body.value !== undefined ? body.value : request.query.value;
        if (value === undefined) fail(required('value'));
        const input = { ...target(request, request.params.id), set: { [key]: value } };
        const { personId } = await updatePersonProperties(
          deps,
          input,
          requestMetadata(ctx, request),
        );
        return answer(input.projectId, personId);
      },
    );

    app.post(
      `${prefix}/delete_property/`,
      {
        config: write,
        schema: {
          tags: ['persons'],
          params: PersonParams,
          querystring: z.object({
            $unset: z.string().optional().describe('the property to delete (or in the body)'),
            format: Format,
          }),
          body: z.object({ $unset: z.string().optional() }).nullish(),
          response,
        },
      },
      async (request) => {
        const key = request.body?.$unset ?? request.query.$unset;
        if (key === undefined || key === '') fail(required('$unset'));
        const input = { ...target(request, request.params.id), key };
        const { personId } = await deletePersonProperty(deps, input, requestMetadata(ctx, request));
        return answer(input.projectId, personId);
      },
    );

    app.post(
      `${prefix}/split/`,
      {
        config: write,
        schema: {
          tags: ['persons'],
          params: PersonParams,
          querystring: z.object({ format: Format }),
          body: z
            .object({
              main_distinct_id: z
                .string()
                .optional()
                .describe(
                  'the distinct id that stays; default the oldest, and the properties are wiped',
                ),
            })
            .nullish(),
          response,
        },
      },
      async (request) => {
        const main = request.body?.main_distinct_id;
        const input = {
          ...target(request, request.params.id),
          ...(main !== undefined ? { mainDistinctId: main } : {}),
        };
        const { personId } = await splitPerson(deps, input, requestMetadata(ctx, request));
        return answer(input.projectId, personId);
      },
    );

    app.delete(
      `${prefix}/`,
      {
        config: write,
        schema: {
          tags: ['persons'],
          params: PersonParams,
          querystring: z.object({
            delete_events: z
              .string()
              .optional()
              .describe("true: also delete the person's events (queued; run weekly)"),
            format: Format,
          }),
          response: { 204: z.null().describe('No content'), ...errorResponses },
        },
      },
      async (request, reply) => {
        const deleteEvents = booleanParam(request.query.delete_events, 'delete_events');
        await deletePerson(
          deps,
          { ...target(request, request.params.id), deleteEvents },
          requestMetadata(ctx, request),
        );
        return reply.status(204).send(null);
      },
    );
  };
