import { randomUUID } from 'node:crypto';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  LogController,
} from 'fastify';
import {
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DomainFailure, validation } from '../core/errors.ts';
import { jsonDepth } from '../core/json.ts';
import { parseStorableJson } from '../core/storable.ts';
import { VERSION } from '../version.ts';
import { type ApiLimits, type AuthLookup, apiScope } from './apiScope.ts';
import {
  type ConnectionPolicy,
  connectionServerOptions,
  installConnectionLimit,
} from './connectionPolicy.ts';
import { installErrorHandler } from './errorHandler.ts';
import { installMetrics, type Metrics } from './metrics.ts';
import { openapiTransform } from './openapiMedia.ts';
import { withOperationIds } from './openapiOperationIds.ts';
import { installRequestLogging } from './requestLogging.ts';

const MAX_REQUEST_ID = 200;

export type Readiness = () => Promise<{ ok: boolean; failing: string[]; degraded?: string[] }>;

export type AppOptions = Readonly<{
  auth: AuthLookup;
  /** registered inside the `/api/` scope: personal API key, scope and project checked first */
  apiRoutes: readonly FastifyPluginAsync[];
  /** rate limit of the /api scope */
  apiLimits: ApiLimits;
  /** registered outside it (capture, /decide): they authenticate with the payload's token */
  publicRoutes: readonly FastifyPluginAsync[];
  readiness: Readiness;
  /** reachability of the databases, for /_health (cheap; cached by the caller) */
  health: Readiness;
  logLevel?: string;
  /** interval of the public routes' summary log line */
  logSummaryMs?: number;
  bodyLimit?: number;
  /** Prometheus metrics: requests counted, GET /metrics served */
  metrics?: Metrics;
  metricsToken?: string | undefined;
  /** timeouts and the most open connections; Node's and Fastify's defaults without it */
  connections?: ConnectionPolicy;
}>;

/** Fastify with zod validation and serialisation, the OpenAPI document, auth and error mapping. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: options.logLevel ?? 'info' },
    // Fastify's two lines per request are replaced by installRequestLogging's one (or a summary).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit ?? 20_000_000,
    ...(options.connections ? connectionServerOptions(options.connections) : {}),
    routerOptions: { ignoreTrailingSlash: true },
    // A caller's (or proxy's) X-Request-Id names the request in the logs and comes back in the
    // answer; without one, Fastify numbers requests. Bounded, so a header cannot bloat every line.
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    // Closing waits for in-flight requests (and so their appends) to finish.
    return503OnClosing: true,
    // Errors the router raises before any route runs (a malformed URL, a path segment longer than
    // the router's limit) answer in the API's error shape like everything else.
    frameworkErrors: (error, _request, reply: FastifyReply) => {
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      void reply.status(tooLong ? 414 : 400).send({
        type: 'invalid_request',
        code: tooLong ? 'uri_too_long' : 'invalid_url',
        detail: tooLong ? 'A path segment is too long.' : 'The URL is malformed.',
        attr: null,
      });
    },
  }).withTypeProvider<ZodTypeProvider>();
  if (options.connections) installConnectionLimit(app, options.connections);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandler(app);
  // Callback-style hooks on every request: an async one costs a promise per request on /decide.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.id.length > MAX_REQUEST_ID) request.id = request.id.slice(0, MAX_REQUEST_ID);
    void reply.header('x-request-id', request.id);
    done();
  });
  if (options.metrics) installMetrics(app, options.metrics, options.metricsToken);
  installRequestLogging(app, options.logSummaryMs);
  // NUL and lone surrogates become U+FFFD (src/core/storable.ts): Postgres text and jsonb cannot
  // hold them, and one in the log would stop a read model. The /api scope cleans bodies of every
  // other content type too.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      const depth = jsonDepth(text);
      if (depth > MAX_API_JSON_DEPTH) {
        return done(
          new DomainFailure(
            validation('parse_error', `JSON nested more than ${MAX_API_JSON_DEPTH} levels deep.`),
          ),
        );
      }
      done(null, parseStorableJson(text));
    } catch (error) {
      done(
        new DomainFailure(
          validation('parse_error', `JSON parse error - ${(error as Error).message}`),
        ),
      );
    }
  });

  // Browsers send capture and flag requests from every site that embeds posthog-js.
  // A bare OPTIONS (no Origin) gets 204 too: PostHog answers every preflight-looking request.
  await app.register(cors, {
    origin: true,
    credentials: true,
    maxAge: 86_400,
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    strictPreflight: false,
  });
  await app.register(swagger, {
    openapi: {
      // The zod schemas come out as JSON Schema 2020-12 (nullable as type arrays, `const`…),
      // which is OpenAPI 3.1's dialect, not 3.0's.
      openapi: '3.1.0',
      info: { title: 'hogstream — PostHog-compatible analytics API', version: VERSION },
      components: {
        securitySchemes: { PersonalApiKey: { type: 'http', scheme: 'bearer' } },
      },
      security: [{ PersonalApiKey: [] }],
      // Relative: the host that serves this document (no public URL is configured).
      servers: [{ url: '/', description: 'this server' }],
    },
    transform: openapiTransform,
    transformObject: (input) => withOperationIds(jsonSchemaTransformObject(input)),
  });
  await app.register(swaggerUi, { routePrefix: '/api/schema/swagger-ui' });
  app.get('/api/schema', { schema: { hide: true } }, async () => app.swagger());

  app.get(
    '/_health',
    {
      schema: {
        tags: ['ops'],
        security: [],
        response: {
          200: z.object({
            status: z.literal('ok'),
            degraded: z
              .array(z.string())
              .optional()
              .describe('what serves but needs an operator: read models with parked events'),
          }),
          503: z.object({ status: z.literal('unavailable'), failing: z.array(z.string()) }),
        },
      },
    },
    async (_request, reply) => {
      const h = await options.health();
      return h.ok
        ? { status: 'ok' as const, ...(h.degraded?.length ? { degraded: h.degraded } : {}) }
        : reply.status(503).send({ status: 'unavailable' as const, failing: h.failing });
    },
  );
  app.get(
    '/_readyz',
    {
      schema: {
        tags: ['ops'],
        security: [],
        response: {
          200: z.object({
            status: z.literal('ready'),
            degraded: z
              .array(z.string())
              .optional()
              .describe('what serves but needs an operator: read models with parked events'),
          }),
          503: z.object({ status: z.literal('not_ready'), failing: z.array(z.string()) }),
        },
      },
    },
    async (_request, reply) => {
      const r = await options.readiness();
      return r.ok
        ? { status: 'ready' as const, ...(r.degraded?.length ? { degraded: r.degraded } : {}) }
        : reply.status(503).send({ status: 'not_ready' as const, failing: r.failing });
    },
  );

  await app.register(apiScope(options.auth, options.apiRoutes, options.apiLimits));
  // Public routes authenticate with the payload's project token, not a personal key: the
  // document's global security requirement does not apply to them. They carry the traffic, so
  // their requests are logged as periodic summaries.
  for (const routes of options.publicRoutes)
    await app.register(async (scope) => {
      scope.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, security: [] };
        route.config = { ...route.config, summarisedLogs: true };
      });
      await scope.register(routes);
    });
  return app;
}

/** No /api body needs more (flag filters are about 6 deep); deeper input would only exhaust the stack downstream. */
export const MAX_API_JSON_DEPTH = 100;
