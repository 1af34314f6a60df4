import {
  type NormalizedCapturedEvent,
  normalizeCapturedEvent,
} from '../../../commands/capture/normalizeCapturedEvent.ts';
import { parseCaptureBatch } from '../../../commands/capture/parseCaptureBatch.ts';
import {
  decodeCaptureRequest,
  type RawCaptureRequest,
} from '../../../ingress/decodeRequestBody.ts';
import {
  type CaptureError,
  type CaptureFailure,
  invalidApiKey,
  invalidPersonalApiKey,
} from '../../../ingress/ingressErrors.ts';
import { httpError } from '../../../src/http/apiError.ts';

/**
 * What the capture route will do with the pure modules, minus the database: a fixed set of known project keys stands
 * for the projects table, and no personal key is known. Lets tests state whole requests and the answer they get.
 */
export type PipelineResult =
  | {
      status: 200 | 204;
      results: NormalizedCapturedEvent[];
      sentAt: string | undefined;
      historicalMigration: boolean;
    }
  | { status: 400 | 401 | 403 | 413; failure: CaptureError; bodyText: string };

export const NOW = new Date('2024-06-02T02:10:00.000Z');

export function runCapturePipeline(
  req: RawCaptureRequest,
  knownTokens: ReadonlySet<string>,
  now = NOW,
): PipelineResult {
  const fail = ({ error }: CaptureFailure): PipelineResult => {
    const { status, body } = httpError(error);
    return { status, failure: error, bodyText: JSON.stringify(body) };
  };
  const decoded = decodeCaptureRequest(req);
  if (!decoded.ok) return fail(decoded);
  const batch = parseCaptureBatch(decoded.payload, {
    path: req.path,
    form: decoded.form,
    query: req.query,
  });
  if (!batch.ok) return fail(batch);
  if (batch.token.startsWith('phx_')) return fail(invalidPersonalApiKey());
  if (!knownTokens.has(batch.token)) return fail(invalidApiKey());
  const ip = req.headers['x-forwarded-for']?.split(',')[0]?.trim() ?? '203.0.113.7';
  const results = batch.items.map((item) =>
    normalizeCapturedEvent(item, { projectId: 1, now, sentAt: batch.sentAt, ip, path: req.path }),
  );
  return {
    status: req.query.beacon === '1' ? 204 : 200,
    results,
    sentAt: batch.sentAt,
    historicalMigration: batch.historicalMigration,
  };
}

/** A refusal as the route answers it, flat: `ok: false`, the status and the body's fields. */
export const answerOf = ({ error }: CaptureFailure) => {
  const { status, body } = httpError(error);
  return { ok: false as const, status, ...body };
};

/** A request as the route will hand it over; headers lower-cased, query parsed the way Fastify does ('+' is a space). */
export function request(opts: {
  method?: string;
  path: string;
  query?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}): RawCaptureRequest {
  const query: Record<string, string | undefined> = {};
  for (const [k, v] of new URLSearchParams(opts.query ?? '')) query[k] ??= v;
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = v;
  const body =
    opts.body === undefined
      ? undefined
      : typeof opts.body === 'string'
        ? Buffer.from(opts.body, 'utf8')
        : opts.body;
  return {
    method: opts.method ?? 'POST',
    path: opts.path.replace(/\/+$/, ''),
    query,
    headers,
    body,
  };
}

export const accepted = (r: PipelineResult) => {
  if (!('results' in r)) throw new Error(`expected success, got ${r.status} ${r.bodyText}`);
  return r.results.flatMap((x) => (x.kind === 'accepted' ? [x.data] : []));
};
