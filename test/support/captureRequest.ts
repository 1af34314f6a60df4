import type { CaptureFailure } from '../../ingress/ingressErrors.ts';
import type { RawCaptureRequest } from '../../ingress/requestContext.ts';
import { httpError } from '../../src/http/apiError.ts';

/**
 * A request as the capture route hands it to the use case (captureRoutes.ts): headers
 * lower-cased, the query parsed the way Fastify does ('+' is a space), the route's path without
 * its trailing slash.
 */
export function captureRequest(opts: {
  method?: string;
  path: string;
  query?: string | undefined;
  headers?: Record<string, string> | undefined;
  body?: Buffer | string | undefined;
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

/** A refusal as the route answers it (the real `httpError`), flat: `ok: false`, the status and the body's fields. */
export const answerOf = ({ error }: CaptureFailure) => {
  const { status, body } = httpError(error);
  return { ok: false as const, status, ...body };
};
