import { DomainFailure, invalidInput } from '../../src/core/errors.ts';

/** Where in the query text a problem is: offsets into the HogQL the client sent. */
export type Span = Readonly<{ start?: number; end?: number }>;

/**
 * A query the compiler refuses or cannot parse: 400 in the API's error shape, its detail naming
 * the problem and, when known, its position (`start`/`end`: offsets into the query text).
 */
export class HogQLError extends DomainFailure {
  readonly start?: number;
  readonly end?: number;
  constructor(message: string, span: Span = {}) {
    const at = span.start === undefined ? '' : ` (at position ${span.start})`;
    super(invalidInput(`${message}${at}`, 'query'));
    this.name = 'HogQLError';
    if (span.start !== undefined) this.start = span.start;
    if (span.end !== undefined) this.end = span.end;
  }
}

/**
 * ClickHouse stopped the query at `max_execution_time`: 504 with a clear detail, as PostHog
 * answers a query that ran out of time. `statusCode` is what the HTTP error handler reads.
 */
export class HogQLTimeoutError extends Error {
  readonly statusCode = 504;
  constructor(seconds: number) {
    super(
      `The query took longer than ${seconds} seconds, its limit. Narrow it (a date range, fewer rows).`,
    );
    this.name = 'HogQLTimeoutError';
  }
}
