/**
 * The one error channel. A decider returns a `DomainError` value (it never throws); handlers,
 * readers and query modules throw a `DomainFailure` carrying one. The HTTP root error handler maps
 * `kind` to a status and the API's error shape `{type, code, detail, attr}`; nothing below the
 * routes knows HTTP.
 */
export type DomainError = Readonly<{
  kind:
    | 'validation'
    | 'not_found'
    | 'forbidden'
    | 'conflict'
    | 'unauthenticated'
    | 'too_large'
    | 'throttled';
  code: string;
  detail: string;
  attr: string | null;
}>;

/** Typed by its kind, so a caller that can only fail in some ways (capture) keeps that in its type. */
export const domainError = <K extends DomainError['kind']>(
  kind: K,
  code: string,
  detail: string,
  attr: string | null = null,
): DomainError & Readonly<{ kind: K }> => ({ kind, code, detail, attr });

export const validation = (code: string, detail: string, attr: string | null = null) =>
  domainError('validation', code, detail, attr);
export const invalidInput = (detail: string, attr: string | null = null) =>
  domainError('validation', 'invalid_input', detail, attr);
export const required = (attr: string) =>
  domainError('validation', 'required', 'This field is required.', attr);
export const notFound = (detail = 'Not found.') => domainError('not_found', 'not_found', detail);
export const forbidden = (detail: string) => domainError('forbidden', 'permission_denied', detail);
export const unauthenticated = (code: string, detail: string) =>
  domainError('unauthenticated', code, detail);
export const tooLarge = (detail: string) => domainError('too_large', 'payload_too_large', detail);
export const throttled = (detail: string) => domainError('throttled', 'throttled', detail);

export const isDomainError = (value: unknown): value is DomainError =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  'kind' in value &&
  'code' in value;

/**
 * Thrown across layers (handlers, readers, queries) to reach the HTTP error mapper. Parsers of
 * request languages (property filters, HogQL, timeline parameters) subclass it, naming the
 * parameter they read in `attr`.
 */
export class DomainFailure extends Error {
  constructor(readonly error: DomainError) {
    super(error.detail);
    this.name = 'DomainFailure';
  }
}

/** `if (!flag) fail(notFound())`: throws the failure; typed `never` so the caller narrows. */
export function fail(error: DomainError): never {
  throw new DomainFailure(error);
}

/**
 * A part of the server is at capacity or restarting (the `/query` queue is full, the HogQL parser
 * thread did not start): 503 with Retry-After in the API's error shape; the client retries, and
 * nothing here is the client's fault or a bug. `statusCode` is what the HTTP error handler reads.
 */
export class ServiceUnavailable extends Error {
  readonly statusCode = 503;
  constructor(detail: string) {
    super(detail);
    this.name = 'ServiceUnavailable';
  }
}
