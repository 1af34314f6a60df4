import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { clientIp } from '../../ingress/requestContext.ts';
import { ApiErrorBody, httpError } from '../../src/http/apiError.ts';
import { type CaptureDeps, captureEvents } from './captureEvents.ts';
import { registerCaptureV1Route } from './captureV1Routes.ts';

export const CAPTURE_PATHS = ['/capture', '/batch', '/e', '/i/v0/e', '/track', '/engage'] as const;

const CaptureQuery = z
  .object({
    compression: z
      .string()
      .optional()
      .describe('gzip-js | gzip | lz64 | base64; sniffed when absent'),
    data: z.string().optional().describe('the payload, for GET requests'),
    beacon: z.string().optional().describe('1: answer 204 with no body (sendBeacon)'),
    _: z.string().optional().describe('client send time, epoch ms'),
    sent_at: z.string().optional().describe('client send time (ISO 8601), to correct clock skew'),
    ver: z.string().optional().describe('client library version'),
    ip: z.string().optional().describe('1: posthog-js asks for the IP to be recorded (ignored)'),
  })
  .catchall(z.unknown());

const flatQuery = (query: unknown): Record<string, string | undefined> =>
  Object.fromEntries(
    Object.entries((query ?? {}) as Record<string, unknown>).map(([k, v]) => [
      k,
      Array.isArray(v) ? String(v[0]) : v === undefined ? undefined : String(v),
    ]),
  );

const flatHeaders = (request: FastifyRequest): Record<string, string | undefined> =>
  Object.fromEntries(
    Object.entries(request.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]),
  );

/**
 * The public capture endpoints. Bodies arrive as raw bytes whatever their content type: the
 * capture modules decide between JSON, form, multipart, base64, gzip and lz64 themselves.
 */
/** what posthog-js, posthog-node and curl send (gzip and lz64 bodies come as octet-stream or text) */
const CAPTURE_CONTENT_TYPES = [
  'application/json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'application/octet-stream',
] as const;

export const captureRoutes =
  (
    deps: CaptureDeps,
    limits: { capture: number; batch: number },
    /** told how many events each accepted request carried into the log, and how many it dropped */
    onCaptured?: (
      accepted: number,
      dropped: number,
      droppedBy: Readonly<Record<string, number>>,
    ) => void,
  ): FastifyPluginAsync =>
  async (base) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: limits.batch },
      (_request, body, done) => done(null, body),
    );

    for (const [path, method] of CAPTURE_PATHS.flatMap(
      (p) =>
        [
          [p, 'POST'],
          [p, 'GET'],
        ] as const,
    )) {
      const bodyLimit = path === '/batch' ? limits.batch : limits.capture;
      app.route({
        method,
        url: `${path}/`,
        bodyLimit,
        ...(method === 'POST' ? { config: { openapi: { consumes: CAPTURE_CONTENT_TYPES } } } : {}),
        schema: {
          tags: ['capture'],
          summary: `Capture events (${method} ${path}/)`,
          description:
            'JSON, form `data=`, multipart, base64, gzip or lz64 bodies (GET: `?data=`); the project API key in the payload.',
          querystring: CaptureQuery,
          ...(method === 'POST'
            ? {
                body: z
                  .any()
                  .describe('one event, an array of events, or {api_key, batch: [...], sent_at}'),
              }
            : {}),
          response: {
            200: z.object({ status: z.literal(1) }),
            204: z.null().describe('beacon=1: no body'),
            400: ApiErrorBody,
            401: ApiErrorBody,
            403: ApiErrorBody,
            413: ApiErrorBody,
          },
        },
        handler: async (request, reply) => {
          const outcome = await captureEvents(
            deps,
            {
              method: request.method,
              path,
              query: flatQuery(request.query),
              headers: flatHeaders(request),
              body: Buffer.isBuffer(request.body) ? request.body : undefined,
              // only the caller's own id: a generated one per request would add bytes to every event
              requestId: request.headers['x-request-id'] ? request.id : undefined,
            },
            clientIp(request.headers, request.socket.remoteAddress),
          );
          if (!outcome.ok) {
            const { status, body } = httpError(outcome.error);
            return reply.status(status).send(body);
          }
          onCaptured?.(outcome.accepted, outcome.dropped, outcome.droppedBy);
          if (outcome.status === 204) return reply.status(204).send(null);
          return reply.status(200).send({ status: 1 as const });
        },
      });
    }
    registerCaptureV1Route(base, deps, limits.batch, onCaptured);
  };
