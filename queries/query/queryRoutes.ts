import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { eventsProjection } from '../../projections/events/eventsProjection.ts';
import { warmParser } from '../../projections/hogql/index.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import { awaitNewest } from '../../src/appContext.ts';
import { DomainFailure, fail, notFound } from '../../src/core/errors.ts';
import { ApiErrorBody, errorResponses } from '../../src/http/apiError.ts';
import { projectOf } from '../../src/http/apiScope.ts';
import type { Metrics } from '../../src/http/metrics.ts';
import { ProjectParams } from '../../src/http/params.ts';
import { clickHouseQueryError } from '../../src/runtime/clickhouseErrors.ts';
import { AsyncQueries, type AsyncQueryLimits } from './asyncQueries.ts';
import { QueryGate, type QueryGateLimits } from './queryGate.ts';
import type { QueryDeps } from './queryRun.ts';
import {
  CacheMissResponse,
  QueryRequest,
  QueryResponse,
  QueryStatusResponse,
} from './querySchemas.ts';
import { runQuery } from './runQuery.ts';

/** `refresh` values that mean "run in the background" (nothing is cached, so no cache is tried first). */
const ASYNC_REFRESH = new Set<unknown>(['async', 'force_async', 'lazy_async']);

/** An asynchronous query's failure in words for its status: the user's problem, or the server's. */
const describeFailure = (log: FastifyBaseLogger) => (error: unknown) => {
  if (error instanceof DomainFailure) return error.error.detail;
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number' && status >= 400 && error instanceof Error) return error.message;
  const refused = clickHouseQueryError(error);
  if (refused) return `The query could not run (${refused.type}): ${refused.message}`;
  log.error({ err: error }, 'asynchronous query failed');
  return 'The query failed on the server.';
};

/**
 * `POST /api/projects/:id/query/` and PostHog's status and cancel routes for asynchronous queries
 * (posthog/api/query.py). Every kind reads with `query:read`, as PostHog's QueryViewSet counts
 * create, retrieve and destroy as read actions.
 */
export const queryRoutes =
  (
    deps: QueryDeps,
    limits: Readonly<{ async: AsyncQueryLimits; sync: QueryGateLimits }>,
    metrics?: Pick<Metrics, 'gauge'>,
  ): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    const prefix = '/api/projects/:project_id/query';
    const read = { scope: 'query:read' };
    const background = new AsyncQueries(limits.async, deps.ctx.now, describeFailure(app.log));
    // synchronous runs, server-wide (asynchronous ones are bounded per project by AsyncQueries)
    const gate = new QueryGate(limits.sync);
    metrics?.gauge(
      'hogstream_query_runs',
      'Synchronous /query runs: running, and waiting for a slot (QUERY_MAX_RUNNING)',
      ['state'],
      async (set) => {
        const { running, waiting } = gate.counts();
        set({ state: 'running' }, running);
        set({ state: 'waiting' }, waiting);
      },
    );
    app.addHook('onClose', async () => background.close());
    // PostHog's parser loads and warms at start, not in the first query (seconds on busy cores)
    warmParser().catch((error: unknown) =>
      app.log.warn({ err: error }, 'the HogQL parser did not start; the first query retries'),
    );
    // read-your-writes, as the events list: events captured before the query are in ClickHouse, their persons in Postgres
    const caughtUp = () =>
      awaitNewest(deps.ctx, { eventTypes: ['EventCaptured'] }, eventsProjection, personsProjection);

    app.post(
      `${prefix}/`,
      {
        config: read,
        schema: {
          tags: ['query'],
          summary:
            'Run a query (HogQL, events, persons, database schema, insights), or start it in the background',
          params: ProjectParams,
          body: QueryRequest,
          response: {
            200: QueryResponse,
            202: CacheMissResponse.describe('async: the query runs; poll GET …/query/:id/'),
            ...errorResponses,
            429: ApiErrorBody,
            503: ApiErrorBody,
          },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const projectId = projectOf(request).id;
        const queryId = body.client_query_id ?? randomUUID().replaceAll('-', '');
        const query = body.query;
        // ClickHouse's query id: unique per run, so a reused client_query_id or another project's never collides (PostHog's team_id prefix)
        const chQueryId = () => `${projectId}_${queryId}_${randomUUID().slice(0, 8)}`;
        await caughtUp();
        if (body.async === true || ASYNC_REFRESH.has(body.refresh)) {
          const status = background.start(projectId, queryId, (signal) =>
            runQuery(deps, { projectId, now: deps.ctx.now(), queryId: chQueryId(), signal }, query),
          );
          return reply.status(202).send({ cache_key: null, query_status: status });
        }
        // a client that hangs up stops its query in ClickHouse
        const abort = new AbortController();
        // (the response's close: the request's own fires once its body is read)
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) abort.abort(new Error('client closed the request'));
        });
        return gate.run(
          () =>
            runQuery(
              deps,
              { projectId, now: deps.ctx.now(), queryId: chQueryId(), signal: abort.signal },
              query,
            ),
          abort.signal,
        );
      },
    );

    const QueryIdParams = ProjectParams.extend({
      id: z.string().describe('the query id: client_query_id, or the id the async answer gave'),
    });

    app.get(
      `${prefix}/:id/`,
      {
        config: read,
        schema: {
          tags: ['query'],
          summary: "An asynchronous query's status, with its results once complete",
          params: QueryIdParams,
          response: {
            200: QueryStatusResponse.describe('complete; results hold the answer (400: it failed)'),
            202: QueryStatusResponse.describe('still running'),
            400: z.union([QueryStatusResponse, ApiErrorBody]),
            401: ApiErrorBody,
            403: ApiErrorBody,
            404: ApiErrorBody,
          },
        },
      },
      async (request, reply) => {
        const status = background.status(projectOf(request).id, request.params.id);
        if (!status)
          fail(
            notFound(
              `No query ${request.params.id} in this project (unknown, expired or cancelled).`,
            ),
          );
        const code = !status.complete ? 202 : status.error ? 400 : 200;
        return reply.status(code).send({ query_status: status });
      },
    );

    app.delete(
      `${prefix}/:id/`,
      {
        config: read,
        schema: {
          tags: ['query'],
          summary: 'Cancel an asynchronous query (its ClickHouse query is stopped) and forget it',
          params: QueryIdParams,
          response: { 200: z.object({ message: z.string() }), ...errorResponses },
        },
      },
      async (request) => {
        if (!background.cancel(projectOf(request).id, request.params.id))
          fail(
            notFound(
              `No query ${request.params.id} in this project (unknown, expired or cancelled).`,
            ),
          );
        return { message: 'Query cancelled' };
      },
    );
  };
