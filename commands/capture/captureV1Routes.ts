import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { decodeContentEncoding } from '../../ingress/contentEncoding.ts';
import { decodeCaptureRequest } from '../../ingress/decodeRequestBody.ts';
import { clientIp } from '../../ingress/requestContext.ts';
import { ApiErrorBody, httpError } from '../../src/http/apiError.ts';
import {
  type CaptureDeps,
  type CaptureOutcome,
  captureBatch,
  whenAdmitted,
} from './captureEvents.ts';
import { type CaptureV1Result, parseCaptureV1Batch } from './parseCaptureV1Batch.ts';

export const CAPTURE_V1_PATH = '/i/v1/analytics/events';

const header = (value: string | string[] | undefined) =>
  Array.isArray(value) ? value.join(', ') : value;

const V1Result = z.union([
  z.object({ result: z.literal('ok') }),
  z.object({
    result: z.literal('drop'),
    details: z.string().describe('why: the ingestion warning type, or invalid_options'),
  }),
]);

/**
 * Capture v1 (posthog-python `capture_mode="v1"`): the same capture use case as the legacy
 * endpoints behind another wire format (parseCaptureV1Batch), answering per event by uuid. It is
 * registered inside the capture plugin, so bodies arrive as raw bytes as they do there.
 */
export function registerCaptureV1Route(
  base: FastifyInstance,
  deps: CaptureDeps,
  bodyLimit: number,
  onCaptured?: (accepted: number, dropped: number, droppedBy: Record<string, number>) => void,
): void {
  const app = base.withTypeProvider<ZodTypeProvider>();
  app.post(
    CAPTURE_V1_PATH,
    {
      bodyLimit,
      config: { openapi: { consumes: ['application/json'] } },
      schema: {
        tags: ['capture'],
        summary: 'Capture events, v1 wire format (POST /i/v1/analytics/events)',
        description:
          'The project API key as `Authorization: Bearer`; `{created_at, historical_migration?, batch: [{event, uuid, distinct_id, timestamp, session_id?, window_id?, options?, properties?}]}`, `Content-Encoding` gzip, deflate, br or none; `PostHog-Sdk-Info: <lib>/<version>` sets `$lib`/`$lib_version`, `PostHog-Request-Timestamp` corrects clock skew.',
        body: z.any().describe('the v1 batch (bytes, decoded by Content-Encoding)'),
        response: {
          200: z
            .object({ results: z.record(z.string(), V1Result) })
            .describe('one result per event uuid: ok (in the log) or drop (never will be)'),
          400: ApiErrorBody,
          401: ApiErrorBody,
          403: ApiErrorBody,
          413: ApiErrorBody,
        },
      },
    },
    async (request, reply) => {
      let results = new Map<string, CaptureV1Result>();
      const outcome = await whenAdmitted(deps, async (): Promise<CaptureOutcome> => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const bytes = await decodeContentEncoding(raw, header(request.headers['content-encoding']));
        if (!Buffer.isBuffer(bytes)) return bytes;
        // The legacy decoder reads the JSON (UTF-8, depth, large bodies in pieces, unstorable text).
        const decoded = decodeCaptureRequest({
          method: 'POST',
          path: CAPTURE_V1_PATH,
          query: {},
          headers: { 'content-type': 'application/json' },
          body: bytes,
        });
        const parsed = decoded.ok
          ? parseCaptureV1Batch(decoded.payload, {
              authorization: header(request.headers.authorization),
              sdkInfo: header(request.headers['posthog-sdk-info']),
              requestTimestamp: header(request.headers['posthog-request-timestamp']),
            })
          : decoded;
        if (!parsed.ok) return parsed;
        results = parsed.results;
        const { itemUuids } = parsed;
        return captureBatch(
          deps,
          parsed.batch,
          {
            path: CAPTURE_V1_PATH,
            query: {},
            requestId: header(request.headers['posthog-request-id']) ?? undefined,
            textLength: decoded.ok ? decoded.textLength : 0,
          },
          clientIp(request.headers, request.socket.remoteAddress),
          (index, reason) => results.set(itemUuids[index]!, { result: 'drop', details: reason }),
        );
      });
      if (!outcome.ok) {
        const { status, body } = httpError(outcome.error);
        return reply.status(status).send(body);
      }
      onCaptured?.(outcome.accepted, outcome.dropped, outcome.droppedBy);
      return reply.status(200).send({ results: Object.fromEntries(results) });
    },
  );
}
