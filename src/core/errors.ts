/**
 * Business rule failures a decider returns (never throws). The HTTP layer maps `kind` to a status
 * and the API's error shape `{type, code, detail, attr}`.
 */
export type DomainError = Readonly<{
  kind: 'validation' | 'not_found' | 'forbidden' | 'conflict';
  code: string;
  detail: string;
  attr: string | null;
}>;

export const domainError = (
  kind: DomainError['kind'],
  code: string,
  detail: string,
  attr: string | null = null,
): DomainError => ({ kind, code, detail, attr });

export const validation = (code: string, detail: string, attr: string | null = null) =>
  domainError('validation', code, detail, attr);
export const notFound = (detail = 'Not found.') => domainError('not_found', 'not_found', detail);
export const forbidden = (detail: string) => domainError('forbidden', 'permission_denied', detail);

export const isDomainError = (value: unknown): value is DomainError =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && 'kind' in value && 'code' in value;

/** Thrown across layers (handlers, queries) to reach the HTTP error mapper. */
export class DomainFailure extends Error {
  constructor(readonly error: DomainError) {
    super(error.detail);
    this.name = 'DomainFailure';
  }
}
