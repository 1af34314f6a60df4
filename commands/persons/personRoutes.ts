import { personRefOrThrow } from './model/personRef.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { handleCommand, lastPositionOf } from '../../src/commandHandling/handleCommand.ts';
import { requestMetadata } from '../../src/http/requestMetadata.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { fail, notFound, validation } from '../../src/core/errors.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import { type PersonCommand, personDecider } from './personDecider.ts';
import { personStream } from './personEvents.ts';
import { eventDeletionsProjection } from './eventDeletionQueue.ts';
import { getPerson } from '../../queries/persons/personQueries.ts';
import { PersonView, toPersonView } from '../../queries/persons/personView.ts';
import { factsOf } from './personReader.ts';

const PersonParams = z.object({ project_id: z.string(), id: z.string().describe('the person\'s integer id or its uuid') });
const Format = z.enum(['json', 'csv']).optional();
const PatchBody = z.object({ properties: z.record(z.string(), z.unknown()).describe('properties to set (others are kept)') }).meta({ id: 'PersonPatch' });
const UpdatePropertyBody = z.object({ key: z.string().optional(), value: z.unknown().optional() }).nullish();
const DeletePropertyBody = z.object({ $unset: z.string().optional() }).nullish();
const SplitBody = z.object({ main_distinct_id: z.string().optional().describe('the distinct id that stays; default the oldest, and the properties are wiped') }).nullish();
const DeleteQuery = z.object({
  delete_events: z.string().optional().describe('true: also delete the person\'s events (queued; run weekly)'),
  format: Format,
});

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off', '']);
function booleanParam(raw: string | undefined, name: string): boolean {
  if (raw === undefined || FALSE.has(raw.toLowerCase())) return false;
  if (TRUE.has(raw.toLowerCase())) return true;
  fail(validation('invalid_input', 'Must be a valid boolean.', name));
}

type CommandBody =
  | { type: 'UpdatePersonProperties'; set: Record<string, unknown> }
  | { type: 'DeletePersonProperty'; key: string }
  | { type: 'SplitPerson'; mainDistinctId?: string }
  | { type: 'DeletePerson'; deleteEvents: boolean };

/**
 * Write side of persons. Each route waits until the persons read model has applied the newest
 * event it folds (bounded), reads the person there, decides against those facts and the person's
 * stream, appends to `person-<project>:<uuid>`, waits for the read model again and answers with
 * the person as the read side now shows it.
 */
export const personCommandRoutes = (ctx: AppContext): FastifyPluginAsync => async (base) => {
  const app = base.withTypeProvider<ZodTypeProvider>();
  const prefix = '/api/projects/:project_id/persons/:id';
  const write = { scope: 'person:write' };

  const catchUp = () => awaitNewest(ctx, personsProjection.filter, personsProjection);

  /** Runs the command; returns the person's integer id. */
  async function execute(request: FastifyRequest, body: CommandBody): Promise<number> {
    const projectId = projectOf(request).id;
    const ref = personRefOrThrow((request.params as z.infer<typeof PersonParams>).id);
    await catchUp();
    const person = await getPerson(ctx.pool, projectId, ref);
    if (!person) fail(notFound());
    const command = { ...body, projectId, person: factsOf(person), at: ctx.now().toISOString() } as PersonCommand;
    const result = await handleCommand(ctx.store, personStream(projectId, person.uuid), personDecider, command, requestMetadata(ctx, request));
    // Each read model waits for the last new event it folds (it never reaches one it does not).
    await ctx.awaitProjection(personsProjection, lastPositionOf(result.appended, personsProjection.filter.eventTypes));
    await ctx.awaitProjection(eventDeletionsProjection, lastPositionOf(result.appended, eventDeletionsProjection.filter.eventTypes));
    return person.id;
  }

  const answer = async (projectId: number, personId: number) => {
    const person = await getPerson(ctx.pool, projectId, { kind: 'id', id: personId });
    if (!person) fail(notFound());
    return toPersonView(person);
  };

  const schema = (body: z.ZodType | undefined, querystring: z.ZodType = z.object({ format: Format })) => ({
    tags: ['persons'],
    params: PersonParams,
    querystring,
    ...(body ? { body } : {}),
    response: { 200: PersonView, ...errorResponses },
  });

  app.patch(`${prefix}/`, { config: write, schema: schema(PatchBody) }, async (request) => {
    const body = request.body as z.infer<typeof PatchBody>;
    return answer(projectOf(request).id, await execute(request, { type: 'UpdatePersonProperties', set: body.properties }));
  });

  app.post(`${prefix}/update_property/`, {
    config: write,
    schema: schema(UpdatePropertyBody, z.object({ key: z.string().optional(), value: z.string().optional(), format: Format })),
  }, async (request) => {
    const body = (request.body ?? {}) as NonNullable<z.infer<typeof UpdatePropertyBody>>;
    const query = request.query as { key?: string; value?: string };
    const key = body.key ?? query.key;
    if (key === undefined || key === '') fail(validation('required', 'This field is required.', 'key'));
    const value = body.value !== undefined ? body.value : query.value;
    if (value === undefined) fail(validation('required', 'This field is required.', 'value'));
    return answer(projectOf(request).id, await execute(request, { type: 'UpdatePersonProperties', set: { [key]: value } }));
  });

  app.post(`${prefix}/delete_property/`, {
    config: write,
    schema: schema(DeletePropertyBody, z.object({ $unset: z.string().optional(), format: Format })),
  }, async (request) => {
    const body = (request.body ?? {}) as NonNullable<z.infer<typeof DeletePropertyBody>>;
    const key = body.$unset ?? (request.query as { $unset?: string }).$unset;
    if (key === undefined || key === '') fail(validation('required', 'This field is required.', '$unset'));
    return answer(projectOf(request).id, await execute(request, { type: 'DeletePersonProperty', key }));
  });

  app.post(`${prefix}/split/`, { config: write, schema: schema(SplitBody) }, async (request) => {
    const main = (request.body as z.infer<typeof SplitBody>)?.main_distinct_id;
    return answer(projectOf(request).id, await execute(request, { type: 'SplitPerson', ...(main !== undefined ? { mainDistinctId: main } : {}) }));
  });

  app.delete(`${prefix}/`, {
    config: write,
    schema: { tags: ['persons'], params: PersonParams, querystring: DeleteQuery, response: { 204: z.null().describe('No content'), ...errorResponses } },
  }, async (request, reply) => {
    const deleteEvents = booleanParam(request.query.delete_events, 'delete_events');
    await execute(request, { type: 'DeletePerson', deleteEvents });
    return reply.status(204).send(null);
  });
};
