import { z } from 'zod';
import type { DomainError } from '../core/errors.ts';

/** The one error shape of the API, for every status. */
export const ApiErrorBody = z
  .object({
    type: z.string(),
    code: z.string(),
    detail: z.string(),
    attr: z.string().nullable(),
  })
  .meta({ id: 'Error' });
export type ApiErrorBody = z.infer<typeof ApiErrorBody>;

const statusByKind = {
  validation: 400,
  not_found: 404,
  forbidden: 403,
  conflict: 409,
  unauthenticated: 401,
  too_large: 413,
  throttled: 429,
} as const satisfies Record<DomainError['kind'], number>;
const typeByKind: Record<DomainError['kind'], string> = {
  validation: 'validation_error',
  not_found: 'invalid_request',
  forbidden: 'authentication_error',
  conflict: 'invalid_request',
  unauthenticated: 'authentication_error',
  too_large: 'validation_error',
  throttled: 'throttled_error',
};

/** A domain or query failure as the API answers it; the status is typed by the error's kind. */
export const httpError = <K extends DomainError['kind']>(
  e: DomainError & Readonly<{ kind: K }>,
): { status: (typeof statusByKind)[K]; body: ApiErrorBody } => ({
  status: statusByKind[e.kind],
  body: { type: typeByKind[e.kind], code: e.code, detail: e.detail, attr: e.attr },
});

/** Standard error responses a route declares beside its success schema (for OpenAPI). */
export const errorResponses = {
  400: ApiErrorBody,
  401: ApiErrorBody,
  403: ApiErrorBody,
  404: ApiErrorBody,
} as const;
