import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { clientIp, flatQuery } from '../../ingress/requestContext.ts';
import { ApiErrorBody, httpError } from '../../src/http/apiError.ts';
import { RETRY_AFTER_SECONDS } from '../../src/http/errorHandler.ts';
import { type DecideDeps, decide } from './decide.ts';
import { answerFormat, answerJson, CLIENT_CONFIG, type DecideAnswer } from './decideResponse.ts';

const DecideQuery = z
  .object({
    v: z
      .string()
      .optional()
      .describe('response version: 1…4 on /decide (default 1), 1|2 on /flags'),
    config: z.string().optional().describe('/flags: "true" adds the client configuration'),
    compression: z
      .string()
      .optional()
      .describe('gzip | gzip-js | lz64 | base64; sniffed when absent'),
    data: z.string().optional().describe('GET: the payload'),
    token: z.string().optional().describe('GET: the project API key'),
    api_key: z.string().optional().describe('GET: the project API key (alias of token)'),
    _: z.string().optional().describe('client send time, epoch ms'),
    ver: z.string().optional().describe('client library version'),
  })
  .catchall(z.unknown());

const Reason = z.object({
  code: z.string(),
  condition_index: z.number().nullable(),
  description: z.string(),
});
const FlagDetail = z.object({
  key: z.string(),
  enabled: z.boolean(),
  variant: z.string().nullable(),
  reason: Reason,
  metadata: z.object({
    id: z.number(),
    version: z.number(),
    payload: z.string().nullable().describe('JSON text of the matched value, or null'),
    description: z.string().nullable(),
  }),
});
const Errors = {
  errorsWhileComputingFlags: z.boolean().describe('some flag could not be evaluated (left out)'),
  errorComputingFlags: z.boolean().describe('the contract’s name for the same'),
};
const Config = z
  .object({})
  .catchall(z.unknown())
  .describe('client configuration (see decideResponse.ts)');
const DecideResponse = z
  .object({
    featureFlags: z
      .union([z.array(z.string()), z.record(z.string(), z.union([z.boolean(), z.string()]))])
      .optional()
      .describe('v1: keys of active flags; v2: active flags only; v3: every flag'),
    featureFlagPayloads: z.record(z.string(), z.string()).optional().describe('v3'),
    flags: z.record(z.string(), FlagDetail).optional().describe('v4'),
    requestId: z.string().optional(),
    ...Errors,
  })
  .catchall(z.unknown());

/** JSON (posthog-node, posthog-js), form `data=` base64, gzip or lz64 bytes */
const DECIDE_CONTENT_TYPES = [
  'application/json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
] as const;

// Every field of DecideQuery is optional text and flatQuery reads them, so the query and the raw
// body skip the per-request zod parse here; the schemas still describe the routes in OpenAPI.
const unvalidated = () => (value: unknown) => ({ value });

// Hand-made JSON: this is the hottest read path, and the zod schemas above are for OpenAPI only.
const sendJson = (reply: FastifyReply, status: number, json: string) =>
  reply.status(status).type('application/json; charset=utf-8').send(json);

const OVERLOADED = JSON.stringify({
  type: 'server_error',
  code: 'service_unavailable',
  detail: 'Flag evaluation is at capacity; retry shortly.',
  attr: null,
});

const EMPTY: DecideAnswer = { evaluations: [], errors: false, meta: new Map() };
const answer = (
  path: '/decide' | '/flags',
  query: Record<string, string | undefined>,
  a: DecideAnswer,
): string => answerJson(answerFormat(path, query), a);

/**
 * The public flag endpoints (`/decide`, `/flags`), authenticated by the token in the payload like
 * capture. Bodies are raw bytes: the decide modules decode JSON, form, base64, gzip and lz64.
 */
export const decideRoutes =
  (deps: DecideDeps, bodyLimit: number): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) =>
      done(null, body),
    );

    const handle = async (
      path: '/decide' | '/flags',
      request: FastifyRequest,
      reply: FastifyReply,
    ) => {
      const query = flatQuery(request.query);
      const outcome = await decide(
        deps,
        {
          method: request.method,
          path,
          query,
          headers: request.headers as Record<string, string | undefined>,
          body: Buffer.isBuffer(request.body) ? request.body : undefined,
        },
        request.headers['x-forwarded-for'] ? clientIp(request.headers, undefined) : null,
        answerFormat(path, query),
      );
      if ('overloaded' in outcome) {
        reply.header('Retry-After', String(RETRY_AFTER_SECONDS));
        return sendJson(reply, 503, OVERLOADED);
      }
      if (!outcome.ok) {
        if (outcome.error.kind === 'throttled') reply.header('Retry-After', '1');
        const { status, body } = httpError(outcome.error);
        return sendJson(reply, status, JSON.stringify(body));
      }
      return sendJson(reply, 200, outcome.json);
    };

    for (const path of ['/decide', '/flags'] as const) {
      app.route({
        method: 'POST',
        url: `${path}/`,
        bodyLimit,
        config: { openapi: { consumes: DECIDE_CONTENT_TYPES } },
        validatorCompiler: unvalidated,
        schema: {
          tags: ['flags'],
          summary: `Evaluate flags for one distinct id (POST ${path}/)`,
          description:
            'Body: JSON (`application/json`, `text/plain`), form `data=<base64 JSON>` ' +
            '(`application/x-www-form-urlencoded`), gzip (`compression=gzip|gzip-js` or sniffed) or ' +
            'lz64 (`compression=lz64`). Fields: `token` | `api_key` | `$token` (or a personal key ' +
            '`phx_…` with `project_id`), `distinct_id` (required), `groups`, `person_properties`, ' +
            '`group_properties`, `$anon_distinct_id`, `$device_id`, `disable_flags`, ' +
            '`geoip_disable`, `flag_keys_to_evaluate`. `X-Forwarded-For` sets the `$geoip_*` person properties.',
          querystring: DecideQuery,
          body: z.any().describe('the decide payload (see description)'),
          response: {
            200: DecideResponse,
            400: ApiErrorBody,
            401: ApiErrorBody,
            413: ApiErrorBody,
            429: ApiErrorBody,
            503: ApiErrorBody,
          },
        },
        handler: async (request, reply) => {
          await handle(path, request, reply);
        },
      });
      app.route({
        method: 'GET',
        url: `${path}/`,
        validatorCompiler: unvalidated,
        schema: {
          tags: ['flags'],
          summary: `Client configuration without flags (GET ${path}/)`,
          querystring: DecideQuery,
          response: { 200: Config },
        },
        handler: async (request, reply) => {
          sendJson(reply, 200, answer(path, flatQuery(request.query), EMPTY));
        },
      });
      app.route({
        method: 'OPTIONS',
        url: `${path}/`,
        schema: {
          tags: ['flags'],
          summary: `CORS (OPTIONS ${path}/)`,
          response: { 200: z.object({ status: z.literal(1) }) },
        },
        handler: async (_request, reply) => {
          sendJson(reply, 200, '{"status":1}');
        },
      });
    }
  };

export { CLIENT_CONFIG };
