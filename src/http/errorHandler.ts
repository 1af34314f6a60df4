import type { FastifyError, FastifyInstance } from 'fastify';
import {
  hasZodFastifySchemaValidationErrors,
  isResponseSerializationError,
} from 'fastify-type-provider-zod';
import { DomainFailure, ServiceUnavailable } from '../core/errors.ts';
import { isDependencyUnavailable } from '../db/postgres.ts';
import { clickHouseQueryError } from '../runtime/clickhouseErrors.ts';
import { type ApiErrorBody, httpError } from './apiError.ts';

// character_not_in_repertoire (NUL), untranslatable_character, invalid_regular_expression,
// program_limit_exceeded / statement_too_complex: backstops behind the validation that should catch them first.
const INPUT_SQLSTATES = new Set(['22021', '22P05', '2201B', '54000', '54001']);

/** What a 503 asks the client to wait before retrying. */
export const RETRY_AFTER_SECONDS = 2;

// "/filters/groups/0" → "filters": PostHog names the top-level field of the body or query.
const attrOf = (path: string) => path.split('/').filter(Boolean)[0] ?? null;

/** Maps every failure to the API error shape; nothing but a bug becomes a 5xx. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const send = (status: number, body: ApiErrorBody) =>
      reply.status(status).type('application/json').send(body);
    if (error instanceof DomainFailure) {
      const mapped = httpError(error.error);
      return send(mapped.status, mapped.body);
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      const first = error.validation[0]!;
      const field = attrOf(first.instancePath);
      const missing =
        first.keyword === 'invalid_type' && /received undefined/.test(first.message ?? '');
      return send(400, {
        type: 'validation_error',
        code: missing ? 'required' : 'invalid_input',
        detail: missing
          ? 'This field is required.'
          : `${field ? `${field}: ` : ''}${first.message ?? 'Invalid input.'}`,
        attr: field,
      });
    }
    if (isResponseSerializationError(error)) {
      request.log.error(
        { err: error, issues: error.cause.issues },
        'response does not match its schema',
      );
      return send(500, {
        type: 'server_error',
        code: 'error',
        detail: 'A server error occurred.',
        attr: null,
      });
    }
    const status = error.statusCode ?? 500;
    if (status === 413)
      return send(413, {
        type: 'validation_error',
        code: 'payload_too_large',
        detail: 'Request body is too large.',
        attr: null,
      });
    if (status === 504)
      // a query that ran out of time (HogQLTimeoutError): the client can narrow it; not a bug
      return send(504, {
        type: 'server_error',
        code: 'timeout',
        detail: error.message,
        attr: null,
      });
    if (error instanceof ServiceUnavailable) {
      // at capacity or restarting: retryable, its detail says which part
      reply.header('Retry-After', String(RETRY_AFTER_SECONDS));
      return send(503, {
        type: 'server_error',
        code: 'service_unavailable',
        detail: error.message,
        attr: null,
      });
    }
    if (status >= 400 && status < 500) {
      return send(status, {
        type: 'validation_error',
        code:
          error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
          error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
            ? 'parse_error'
            : 'invalid_input',
        detail: error.message,
        attr: null,
      });
    }
    const sqlState = (error as { code?: unknown }).code;
    if (typeof sqlState === 'string' && INPUT_SQLSTATES.has(sqlState)) {
      // A value the database cannot hold or a pattern it cannot compile reached it: the input's fault.
      request.log.warn({ err: error }, 'input refused by the database');
      return send(400, {
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'The request contains a value that cannot be stored or compared.',
        attr: null,
      });
    }
    const refused = clickHouseQueryError(error);
    if (refused) {
      // Backstop: the events reader already turns these into a 400 naming the expression's error;
      // any other ClickHouse query a request's values reach answers the same way, never a 500.
      request.log.warn({ err: error }, 'query refused by ClickHouse');
      return send(400, {
        type: 'validation_error',
        code: 'invalid_input',
        detail: `The query could not run (${refused.type}): ${refused.message}`,
        attr: null,
      });
    }
    if (isDependencyUnavailable(error)) {
      // The database is down, restarting or overloaded: a bounded, retryable answer, never a hang or a 500.
      request.log.warn({ err: error }, 'dependency unavailable');
      reply.header('Retry-After', String(RETRY_AFTER_SECONDS));
      return send(503, {
        type: 'server_error',
        code: 'service_unavailable',
        detail: 'The service is temporarily unavailable; retry shortly.',
        attr: null,
      });
    }
    request.log.error({ err: error }, 'unhandled error');
    return send(500, {
      type: 'server_error',
      code: 'error',
      detail: 'A server error occurred.',
      attr: null,
    });
  });
  app.setNotFoundHandler((_request, reply) =>
    reply
      .status(404)
      .send({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null }),
  );
}
