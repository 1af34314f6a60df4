import { z } from 'zod';

/**
 * `/query`'s request and answers as PostHog's posthog/schema.py names them (QueryRequest,
 * HogQLQueryResponse, EventsQueryResponse, ActorsQueryResponse, QueryStatusResponse): the one
 * source of validation and of the OpenAPI document. Each kind's own fields are checked by the
 * code that runs it (the kinds are many and PostHog's clients send extra fields), so `query` is an
 * object with a `kind` here.
 */

/** The largest page a query answers (HogQL's MAX_SELECT_RETURNED_ROWS). */
export const MAX_QUERY_ROWS = 50_000;
/** The page a query answers without `limit` (HogQL's DEFAULT_RETURNED_ROWS). */
export const DEFAULT_QUERY_ROWS = 100;

const Refresh = z
  .union([
    z.boolean(),
    z.enum([
      'async',
      'async_except_on_cache_miss',
      'blocking',
      'force_async',
      'force_blocking',
      'force_cache',
      'lazy_async',
    ]),
  ])
  .optional()
  .describe(
    'PostHog\'s execution modes; nothing is cached here, so "async", "force_async" and "lazy_async" run in the background and the others block',
  );

export const QueryRequest = z
  .object({
    query: z
      .looseObject({ kind: z.string().min(1).describe('the query kind, e.g. HogQLQuery') })
      .describe(
        'the query node: HogQLQuery, EventsQuery, ActorsQuery, PersonsNode, DatabaseSchemaQuery or an insight kind',
      ),
    async: z
      .boolean()
      .optional()
      .describe(
        'run in the background: 202 with query_status (PostHog\'s legacy flag; same as refresh "async")',
      ),
    client_query_id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,128}$/, 'client_query_id: letters, digits, - and _, at most 128')
      .optional()
      .describe('the id of the query (its status URL with async); a random id when absent'),
    refresh: Refresh,
    name: z.string().max(400).optional().describe('a label for the query (accepted)'),
    filters_override: z.unknown().optional().describe('accepted and ignored (dashboards only)'),
    variables_override: z.unknown().optional().describe('accepted and ignored (dashboards only)'),
  })
  .meta({ id: 'QueryRequest' });

/** PostHog's QueryStatus: what `async` answers at once and the status route while it runs. */
export const QueryStatusView = z
  .object({
    id: z.string(),
    team_id: z.number().int(),
    query_async: z.literal(true),
    complete: z.boolean(),
    error: z.boolean(),
    error_message: z.string().nullable(),
    results: z.unknown().describe("when complete: the whole answer of the query's kind"),
    start_time: z.string(),
    pickup_time: z.string(),
    end_time: z.string().nullable(),
    expiration_time: z.string().nullable().describe('when the result is forgotten'),
    task_id: z.string().nullable(),
    query_progress: z.null(),
    labels: z.null(),
    dashboard_id: z.null(),
    insight_id: z.null(),
  })
  .meta({ id: 'QueryStatus' });

export const QueryStatusResponse = z
  .object({ query_status: QueryStatusView })
  .meta({ id: 'QueryStatusResponse' });

export const CacheMissResponse = z
  .object({ cache_key: z.string().nullable(), query_status: QueryStatusView })
  .meta({ id: 'CacheMissResponse' });

/** The tabular answer HogQLQuery, EventsQuery and ActorsQuery share (their own extras kept). */
export const TabularQueryResponse = z
  .looseObject({
    results: z.array(z.unknown()),
    columns: z.array(z.unknown()),
    types: z
      .array(z.unknown())
      .describe('HogQLQuery: [name, ClickHouse type] pairs; EventsQuery/ActorsQuery: the types'),
    hogql: z.string().describe('the HogQL that ran'),
    hasMore: z.boolean().describe('more rows past this page (ask again with offset)'),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .meta({ id: 'TabularQueryResponse' });

/** Insight kinds and DatabaseSchemaQuery: the body PostHog answers for that kind. */
export const OtherQueryResponse = z
  .looseObject({})
  .describe('TrendsQuery … PathsQuery: {results, …}; DatabaseSchemaQuery: {tables, joins}')
  .meta({ id: 'OtherQueryResponse' });

export const QueryResponse = z.union([TabularQueryResponse, OtherQueryResponse]);
