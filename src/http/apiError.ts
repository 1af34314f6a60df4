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

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: ApiErrorBody,
  ) {
    super(body.detail);
    this.name = 'ApiError';
  }
}

export const authenticationError = (code: string, detail: string) =>
  new ApiError(401, { type: 'authentication_error', code, detail, attr: null });

export const invalidPersonalApiKey = (detail = 'Personal API key found in request Authorization header is invalid.') =>
  authenticationError('invalid_personal_api_key', detail);

export const permissionDenied = (detail: string) =>
  new ApiError(403, { type: 'authentication_error', code: 'permission_denied', detail, attr: null });

export const notFoundError = (detail = 'Not found.') =>
  new ApiError(404, { type: 'invalid_request', code: 'not_found', detail, attr: null });

export const validationError = (code: string, detail: string, attr: string | null) =>
  new ApiError(400, { type: 'validation_error', code, detail, attr });

const statusByKind: Record<DomainError['kind'], number> = {
  validation: 400,
  not_found: 404,
  forbidden: 403,
  conflict: 409,
};
const typeByKind: Record<DomainError['kind'], string> = {
  validation: 'validation_error',
  not_found: 'invalid_request',
  forbidden: 'authentication_error',
  conflict: 'invalid_request',
};

export const fromDomainError = (e: DomainError) =>
  new ApiError(statusByKind[e.kind], { type: typeByKind[e.kind], code: e.code, detail: e.detail, attr: e.attr });

/** Standard error responses a route declares beside its success schema (for OpenAPI). */
export const errorResponses = {
  400: ApiErrorBody,
  401: ApiErrorBody,
  403: ApiErrorBody,
  404: ApiErrorBody,
} as const;
