import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actionsReader } from '../../projections/actions/actionsReader.ts';
import { eventsProjection } from '../../projections/events/eventsProjection.ts';
import {
  getEvent,
  type ListResult,
  listEvents,
  propertyValues,
} from '../../projections/events/eventsReader.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import { parseDateParam } from '../../projections/shared/dateParam.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { fail, notFound, validation } from '../../src/core/errors.ts';
import { isUuid } from '../../src/core/uuid.ts';
import { errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import { ProjectParams } from '../../src/http/params.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { withStepPersons } from '../actions/actionStepPersons.ts';
import { offsetUrl, requestUrl, stringList, timestampCursorUrl } from './eventCursor.ts';
import { jsonStream, pageInParts } from './eventPageParts.ts';
import { resolvePersonFilters } from './eventPersonFilters.ts';
import { distinctIdsOfPerson, withPersons } from './eventPersons.ts';
import { EventView, eventsCsv, selectCsv, toEventView } from './eventView.ts';

/**
 * Bounded read-your-writes for the events table: resolves once the events captured before the
 * call are in ClickHouse, or at the timeout (false); the routes answer either way.
 */
export type AwaitEvents = () => Promise<boolean>;

/**
 * Waits for the newest `EventCaptured` of the log to reach the `clickhouse:events` projection and
 * the persons read model (events carry their person's summary).
 */
export const awaitCapturedEvents =
  (ctx: AppContext): AwaitEvents =>
  () =>
    awaitNewest(ctx, { eventTypes: ['EventCaptured'] }, eventsProjection, personsProjection);

/**
 * The largest page: PostHog's events list took up to 10,000 (hogql's MAX_SELECT_RETURNED_ROWS,
 * which the Airbyte connector asks for); more is a 400, not a clamp, since a clamped page is
 * shorter than asked and a client stopping at a short page would take it for the end.
 */
export const MAX_LIMIT = 10_000;
const StringOrList = z.union([z.string(), z.array(z.string())]);
const Format = z.enum(['json', 'csv']).optional().describe('csv: a CSV file instead of JSON');

const ListQuery = z.object({
  after: z
    .string()
    .optional()
    .describe('only events after this time (ISO 8601, or relative like -7d)'),
  before: z
    .string()
    .optional()
    .describe('only events before this time (ISO 8601, or relative like -1h)'),
  after_uuid: z
    .string()
    .optional()
    .describe(
      'cursor tie-break set by `next` links: with `after`, events after (after, after_uuid)',
    ),
  before_uuid: z
    .string()
    .optional()
    .describe(
      'cursor tie-break set by `next` links: with `before`, events before (before, before_uuid)',
    ),
  distinct_id: z.string().optional().describe("only this distinct id's person's events"),
  event: z.string().optional().describe('event name'),
  person_id: z
    .string()
    .optional()
    .describe('person id (integer) or UUID: events of all its distinct ids'),
  properties: z
    .string()
    .optional()
    .describe('JSON list of property filters [{key, value, operator, type}] or an AND/OR group'),
  select: StringOrList.optional().describe(
    'JSON list of HogQL expressions to return (see queries/events/README.md)',
  ),
  where: StringOrList.optional().describe('JSON list of HogQL conditions that must all hold'),
  orderBy: StringOrList.optional().describe(
    'JSON list, default ["-timestamp"]; ["timestamp"] for ascending',
  ),
  action_id: z.coerce
    .number()
    .int()
    .optional()
    .describe(
      "events matching any step of this action (an unknown action, or one without steps, matches none, as PostHog's list)",
    ),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_LIMIT, `limit is at most ${MAX_LIMIT}: ask for less and follow next`)
    .optional()
    .describe(
      `default 100, at most ${MAX_LIMIT} (more: 400); a page shorter than limit is the last one`,
    ),
  offset: z.coerce.number().int().min(0).default(0).describe('results to skip'),
  format: Format,
});

const EventsPage = z
  .object({ next: z.string().nullable(), results: z.array(EventView) })
  .meta({ id: 'EventsPage' });
const SelectPage = z
  .object({
    columns: z.array(z.string()).describe('the select expressions as given, or their AS alias'),
    types: z.array(z.string()).describe('ClickHouse type of each column'),
    results: z.array(z.array(z.unknown())),
    next: z.string().nullable(),
  })
  .meta({ id: 'EventsSelectPage' });
const ValueList = z.array(z.object({ name: z.unknown() })).meta({ id: 'EventPropertyValues' });

function listParam(raw: string | string[] | undefined, name: string): string[] | undefined {
  const parsed = stringList(raw, name);
  if (parsed && 'error' in parsed) fail(validation('invalid_input', parsed.error, name));
  return parsed;
}

function dateParam(raw: string | undefined, name: string, now: Date): string | undefined {
  if (raw === undefined) return undefined;
  const parsed = parseDateParam(raw, now);
  if (!parsed)
    fail(
      validation(
        'invalid_input',
        `${name} must be an ISO 8601 date-time or a relative date like -7d`,
        name,
      ),
    );
  return parsed;
}

function uuidParam(raw: string | undefined, name: string, detail: string): string | undefined {
  if (raw === undefined) return undefined;
  if (!isUuid(raw)) fail(validation('invalid_input', detail, name));
  return raw;
}

const csv = (reply: FastifyReply, body: string) => reply.type('text/csv; charset=utf-8').send(body);
function nextLink(
  request: FastifyRequest,
  result: ListResult,
  offset: number,
  limit: number,
): string | null {
  if (!result.more) return null;
  const base = requestUrl(request.protocol, request.headers.host, request.url);
  if (result.paging.kind === 'offset') return offsetUrl(base, offset, limit);
  return result.paging.last
    ? timestampCursorUrl(base, result.paging.descending, result.paging.last)
    : null;
}

/**
 * The events REST API (api-spec.md "Events (REST)", capture.md §4.2) over the ClickHouse
 * `events` table: list with filters, HogQL select/where, CSV; one event; property values.
 */
/** Bytes of event data the server holds at once for a page of the events list: a larger page is read and sent in parts. */
export const DEFAULT_EVENTS_PAGE_MAX_BYTES = 32 * 1024 * 1024;

export const eventQueryRoutes =
  (
    ctx: AppContext,
    ch: ClickHouse,
    awaitEvents: AwaitEvents,
    pageMaxBytes = DEFAULT_EVENTS_PAGE_MAX_BYTES,
  ): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const prefix = '/api/projects/:project_id/events';
    const read = { scope: 'query:read' };

    app.get(
      `${prefix}/`,
      {
        config: { ...read, openapi: { csv: true } },
        schema: {
          tags: ['events'],
          summary:
            'List events (newest first), with filters, HogQL select/where and a timestamp cursor',
          params: ProjectParams,
          querystring: ListQuery,
          response: {
            200: z
              .union([EventsPage, SelectPage])
              .describe('events, or {columns, results} rows with select; text/csv with format=csv'),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const q = request.query;
        const now = ctx.now();
        if (q.after_uuid !== undefined && q.after === undefined)
          fail(validation('invalid_input', 'after_uuid needs after', 'after_uuid'));
        if (q.before_uuid !== undefined && q.before === undefined)
          fail(validation('invalid_input', 'before_uuid needs before', 'before_uuid'));
        let properties: unknown;
        if (q.properties !== undefined) {
          try {
            properties = JSON.parse(q.properties);
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
        const limit = q.limit ?? 100;
        const input = {
          projectId: projectOf(request).id,
          now,
          after: dateParam(q.after, 'after', now),
          before: dateParam(q.before, 'before', now),
          afterUuid: uuidParam(q.after_uuid, 'after_uuid', 'after_uuid must be an event UUID'),
          beforeUuid: uuidParam(q.before_uuid, 'before_uuid', 'before_uuid must be an event UUID'),
          distinctId: q.distinct_id,
          event: q.event,
          ...(q.person_id !== undefined
            ? {
                personDistinctIds: await distinctIdsOfPerson(
                  ctx.pool,
                  projectOf(request).id,
                  q.person_id,
                ),
              }
            : {}),
          properties,
          ...(q.action_id !== undefined
            ? {
                actionSteps:
                  (await actionsReader(ctx.pool).get(projectOf(request).id, q.action_id))?.steps ??
                  [],
              }
            : {}),
          select: listParam(q.select, 'select'),
          where: listParam(q.where, 'where'),
          orderBy: listParam(q.orderBy, 'orderBy'),
          limit,
          offset: q.offset,
        };
        await awaitEvents();
        // person filters (properties of type person, person.properties in where): resolved in Postgres once persons caught up
        const persons = await resolvePersonFilters(ctx.pool, {
          projectId: input.projectId,
          now,
          properties: input.properties,
          where: input.where,
        });
        const result = await listEvents(ch, {
          ...input,
          properties: persons.properties,
          where: persons.where,
          personIdSets: persons.personIdSets,
          ...(input.actionSteps
            ? {
                actionSteps: await withStepPersons(
                  ctx.pool,
                  input.projectId,
                  now,
                  input.actionSteps,
                ),
              }
            : {}),
          maxBytes: pageMaxBytes,
        });
        const events = result.kind === 'events' ? result.rows.map(toEventView) : [];
        const next = nextLink(request, result, q.offset, limit);
        if (result.kind === 'events' && result.rest.length > 0 && q.format === 'csv')
          // a CSV's columns come from every event, so it is built whole: refused rather than cut short
          fail(
            validation(
              'invalid_input',
              `format=csv: these ${limit} events carry more than ${pageMaxBytes} bytes; ask for fewer (limit) or narrow the filters`,
              'limit',
            ),
          );
        if (result.kind === 'events' && result.rest.length > 0)
          return jsonStream(
            reply,
            pageInParts(ctx, ch, input.projectId, next, events, result.rest, request.log),
          );
        if (q.format === 'csv')
          return csv(
            reply,
            result.kind === 'events'
              ? eventsCsv(events)
              : selectCsv(result.columns, result.results),
          );
        if (result.kind !== 'events')
          return { columns: result.columns, types: result.types, results: result.results, next };
        return { next, results: await withPersons(ctx.pool, projectOf(request).id, events) };
      },
    );

    app.get(
      `${prefix}/values/`,
      {
        config: read,
        schema: {
          tags: ['events'],
          summary: 'Values of an event property, most frequent first',
          params: ProjectParams,
          querystring: z.object({
            key: z.string().min(1).describe('event property key'),
            value: z.string().optional().describe('keep values containing this (case-insensitive)'),
            event_name: StringOrList.optional().describe(
              'only events of these names (repeat the parameter for several)',
            ),
            limit: z.coerce.number().int().min(1).max(100).default(10).describe('values (1–100)'),
            format: Format,
          }),
          response: { 200: ValueList, ...errorResponses },
        },
      },
      async (request, reply) => {
        const q = request.query;
        await awaitEvents();
        const values = await propertyValues(ch, {
          projectId: projectOf(request).id,
          key: q.key,
          ...(q.value !== undefined ? { value: q.value } : {}),
          ...(q.event_name !== undefined
            ? { eventNames: Array.isArray(q.event_name) ? q.event_name : [q.event_name] }
            : {}),
          limit: q.limit,
        });
        const body = values.map((name) => ({ name }));
        if (q.format === 'csv')
          return csv(
            reply,
            selectCsv(
              ['name'],
              values.map((v) => [v]),
            ),
          );
        return body;
      },
    );

    app.get(
      `${prefix}/:id/`,
      {
        config: read,
        schema: {
          tags: ['events'],
          summary: 'One event by its UUID',
          params: ProjectParams.extend({ id: z.string().describe('event UUID') }),
          querystring: z.object({
            format: Format,
            include_person: z
              .string()
              .optional()
              .describe('accepted; the person is always included'),
          }),
          response: { 200: EventView, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        if (!isUuid(id)) fail(validation('invalid', 'Invalid UUID'));
        await awaitEvents();
        const row = await getEvent(ch, projectOf(request).id, id);
        if (!row) fail(notFound(`No events exist for event UUID ${id}`));
        const event = toEventView(row);
        if (request.query.format === 'csv') return csv(reply, eventsCsv([event]));
        return (await withPersons(ctx.pool, projectOf(request).id, [event]))[0]!;
      },
    );
  };
