import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_EVENT_DELETION_SCHEDULE, isValidCron } from './core/cron.ts';
import type { PoolTimeouts } from './db/postgres.ts';
import type { ConnectionPolicy } from './http/connectionPolicy.ts';

const url = (protocols: string[]) =>
  z
    .string()
    .refine(
      (v) => protocols.some((p) => v.startsWith(`${p}://`)),
      `must start with ${protocols.map((p) => `${p}://`).join(' or ')}`,
    );

const ConfigSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./.data'),
  DATABASE_URL: url(['postgres', 'postgresql']).optional(),
  CLICKHOUSE_URL: url(['http', 'https']).optional(),
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain identifier')
    .default('hogstream'),
  /** embedded chDB's directory; default DATA_DIR/clickhouse */
  CHDB_PATH: z.string().min(1).optional(),
  EVENTSTORE_URL: url(['esdb', 'esdb+discover', 'kurrentdb', 'kdb']).optional(),
  INIT_PROJECT_API_KEY: z.string().min(8).optional(),
  METRICS_TOKEN: z.string().min(16).optional(),
  PROJECTION_STUCK_SECONDS: z.coerce.number().int().min(1).max(86_400).default(120),
  INIT_PERSONAL_API_KEY: z.string().min(8).optional(),
  // 'info': a line per API request, a summary every 10 s for capture, /decide and /flags.
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_SUMMARY_SECONDS: z.coerce.number().int().min(1).max(3600).default(10),
  /** request body limits of the capture endpoints (capture.md decision 5) */
  CAPTURE_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(2 * 1024 * 1024),
  BATCH_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(20_000_000),
  /** request body limit of /decide and /flags (compressed bodies may expand to 4 MB at most) */
  DECIDE_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  /** projects whose flag definitions /decide keeps in memory (least recently used dropped) */
  FLAG_CACHE_MAX_PROJECTS: z.coerce.number().int().min(1).default(10_000),
  /** worker threads evaluating /decide and /flags; 0 evaluates on the main thread (default: cores − 1, 1 to 4) */
  FLAG_EVALUATION_THREADS: z.coerce
    .number()
    .int()
    .min(0)
    .max(64)
    .default(() => Math.max(1, Math.min(4, os.availableParallelism() - 1))),
  /** a /decide or /flags request's evaluation time (a quarter of it per run on a thread); the flags undecided by then are left out */
  FLAG_EVALUATION_DEADLINE_MS: z.coerce.number().int().min(40).max(60_000).default(1_000),
  /** jobs one evaluation thread holds (running or queued); past it: 503 with Retry-After */
  FLAG_EVALUATION_QUEUE_PER_THREAD: z.coerce.number().int().min(1).default(256),
  /** jobs one project may hold on all evaluation threads together; past it: 429 */
  FLAG_EVALUATION_QUEUE_PER_PROJECT: z.coerce.number().int().min(1).default(128),
  /** waiting for a Postgres connection (a free pool slot or a new session) before answering 503 */
  PG_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(2_000),
  /** longest Postgres statement (server-side statement_timeout) */
  PG_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /** a Postgres transaction left idle this long is ended by the server (e.g. an abandoned export) */
  PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  /** /api requests per minute per personal API key (PostHog's CRUD limit); 0 turns the limit off */
  API_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(480),
  /** /api requests per minute per client address, refused and anonymous ones counted (5 keys' worth); 0: off */
  API_RATE_LIMIT_PER_IP_PER_MINUTE: z.coerce.number().int().min(0).default(2_400),
  /** a connection must send a request's headers this soon (after connecting, or after its last answer) */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(500).max(600_000).default(10_000),
  /** a request (headers and body) must be received this soon; answering it may take longer */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(500).max(3_600_000).default(60_000),
  /** an idle keep-alive connection is closed after this */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /** open connections at most; past it new ones are closed at once (keep it under `ulimit -n`) */
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(10_000),
  /** largest captured event (as JSON); a request holding a larger one is refused with 413 */
  CAPTURE_MAX_EVENT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(2 * 1024 * 1024),
  /** most keys of properties + $set + $set_once in one captured event; more → 413 */
  CAPTURE_MAX_EVENT_PROPERTIES: z.coerce.number().int().min(10).default(10_000),
  /** events per second a project may capture (token bucket; 0: no limit); the excess is dropped with an ingestion warning */
  CAPTURE_RATE_LIMIT_EVENTS_PER_SECOND: z.coerce.number().int().min(0).default(100_000),
  /** events a project may capture at once above its rate */
  CAPTURE_RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(1_000_000),
  /** log positions the read models fed in memory may lag (with the requests let go) before capture waits */
  CAPTURE_BACKLOG_MAX: z.coerce.number().int().min(1).default(5_000),
  /** longest a capture request waits for them (then it goes on anyway); 0: never waits */
  CAPTURE_BACKLOG_WAIT_MS: z.coerce.number().int().min(0).default(5_000),
  /** bytes of event data one page of the events list may carry; a page of larger events is cut short (with a next link) */
  EVENTS_PAGE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(32 * 1024 * 1024),
  /** synchronous /query runs the server takes at once (each may hold 2 GB and ClickHouse's cores for 30 s) */
  QUERY_MAX_RUNNING: z.coerce.number().int().min(1).max(1000).default(4),
  /** synchronous /query runs that wait for a slot; one more: 503 at once */
  QUERY_MAX_WAITING: z.coerce.number().int().min(0).max(10_000).default(50),
  /** a waiting synchronous /query run gets 503 (Retry-After) after this */
  QUERY_QUEUE_WAIT_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
  /** asynchronous /query queries one project may run at once; one more: 429 */
  QUERY_ASYNC_MAX_RUNNING: z.coerce.number().int().min(1).max(100).default(3),
  /** minutes an asynchronous /query result is kept after it finished */
  QUERY_ASYNC_KEEP_MINUTES: z.coerce.number().int().min(1).max(1440).default(10),
  /** finished asynchronous /query results kept per project (the oldest dropped first) */
  QUERY_ASYNC_MAX_KEPT: z.coerce.number().int().min(1).max(1000).default(20),
  /**
   * concurrent runners of the persons read model, each folding the events of one partition of
   * (project, distinct id); a read model built with another count is refused (docs/SCALING.md)
   */
  INGESTION_WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  /** how long a REST write waits for its read model before answering anyway */
  READ_YOUR_WRITES_TIMEOUT_MS: z.coerce.number().int().min(0).default(5000),
  /** cron (UTC) of the queued person-event deletions; PostHog's weekly Sunday 05:00 by default */
  EVENT_DELETION_SCHEDULE: z
    .string()
    .refine(isValidCron, 'must be a cron expression, e.g. "0 5 * * 0"')
    .default(DEFAULT_EVENT_DELETION_SCHEDULE),
  /** cron (UTC) of the dynamic cohorts' recalculation check */
  COHORT_CALCULATION_SCHEDULE: z
    .string()
    .refine(isValidCron, 'must be a cron expression, e.g. "*/10 * * * *"')
    .default('*/10 * * * *'),
  /** a dynamic cohort is recalculated when its last calculation is older than this */
  COHORT_RECALCULATION_MINUTES: z.coerce.number().int().min(1).default(60),
});

/** One line per setting for `npm start -- --help` (the README's table has the full story). */
const SETTINGS: Record<keyof z.input<typeof ConfigSchema>, string> = {
  PORT: 'HTTP port (0: any free port)',
  HOST: 'listen address (0.0.0.0 in a container)',
  DATA_DIR: 'directory of the embedded Postgres and chDB',
  DATABASE_URL: 'Postgres server (postgres://…); unset: embedded Postgres',
  CLICKHOUSE_URL: 'ClickHouse server (http[s]://…); unset: embedded chDB',
  CLICKHOUSE_DATABASE: "ClickHouse database of hogstream's tables",
  CHDB_PATH: 'embedded chDB directory (default DATA_DIR/clickhouse)',
  EVENTSTORE_URL: 'EventStoreDB/KurrentDB (esdb://…); unset: the event log lives in Postgres',
  INIT_PROJECT_API_KEY: "project API key of the first start's project (default: generated)",
  INIT_PERSONAL_API_KEY: 'personal API key of the first start (default: generated)',
  METRICS_TOKEN: 'bearer token of GET /metrics; unset: loopback clients only',
  PROJECTION_STUCK_SECONDS: '/_readyz fails for a projection stuck this long',
  LOG_LEVEL: 'fatal | error | warn | info | debug | trace | silent',
  LOG_SUMMARY_SECONDS: 'interval of the summary line of capture, /decide and /flags requests',
  CAPTURE_BODY_LIMIT_BYTES: 'request body limit of the single-event capture routes',
  BATCH_BODY_LIMIT_BYTES: 'request body limit of /batch and every other route',
  DECIDE_BODY_LIMIT_BYTES: 'request body limit of /decide and /flags',
  FLAG_CACHE_MAX_PROJECTS: 'projects whose flag definitions /decide keeps in memory',
  FLAG_EVALUATION_THREADS:
    'threads evaluating /decide and /flags (0: the main thread; default cores − 1, 1 to 4)',
  FLAG_EVALUATION_DEADLINE_MS: 'evaluation time of one /decide or /flags request',
  FLAG_EVALUATION_QUEUE_PER_THREAD: 'jobs one evaluation thread holds; more: 503',
  FLAG_EVALUATION_QUEUE_PER_PROJECT: 'jobs one project holds on the evaluation threads; more: 429',
  PG_CONNECT_TIMEOUT_MS: 'wait for a Postgres connection before answering 503',
  PG_STATEMENT_TIMEOUT_MS: 'longest Postgres statement',
  PG_IDLE_IN_TRANSACTION_TIMEOUT_MS: 'a Postgres transaction idle this long is ended',
  API_RATE_LIMIT_PER_MINUTE: '/api requests a minute per personal API key (0: no limit)',
  API_RATE_LIMIT_PER_IP_PER_MINUTE:
    '/api requests a minute per client address, bad keys included (0: no limit)',
  HTTP_HEADERS_TIMEOUT_MS: "a connection that has not sent a request's headers by then is closed",
  HTTP_REQUEST_TIMEOUT_MS: 'a request not wholly received by then is answered 408',
  HTTP_KEEP_ALIVE_TIMEOUT_MS: 'an idle keep-alive connection is closed after this',
  HTTP_MAX_CONNECTIONS: 'open connections at most; more are closed at once',
  CAPTURE_MAX_EVENT_BYTES: 'largest captured event (JSON bytes); larger: 413',
  CAPTURE_MAX_EVENT_PROPERTIES: 'most properties + $set + $set_once keys of one event; more: 413',
  CAPTURE_RATE_LIMIT_EVENTS_PER_SECOND: 'events a second one project may capture (0: no limit)',
  CAPTURE_RATE_LIMIT_BURST: 'events a project may capture at once above its rate',
  CAPTURE_BACKLOG_MAX: 'log positions the read models may lag before capture waits',
  CAPTURE_BACKLOG_WAIT_MS: 'longest a capture request waits for them (then goes on; 0: never)',
  EVENTS_PAGE_MAX_BYTES:
    'event bytes of an events-list page the server holds at once (a larger page is sent in parts)',
  QUERY_MAX_RUNNING: 'synchronous /query runs at once, server-wide (more wait)',
  QUERY_MAX_WAITING: 'synchronous /query runs waiting for a slot (one more: 503)',
  QUERY_QUEUE_WAIT_MS: 'a waiting synchronous /query run gets 503 after this',
  QUERY_ASYNC_MAX_RUNNING: 'asynchronous /query queries a project may run at once (one more: 429)',
  QUERY_ASYNC_KEEP_MINUTES: 'minutes a finished asynchronous /query result is kept',
  QUERY_ASYNC_MAX_KEPT: 'finished asynchronous /query results kept per project (oldest dropped)',
  INGESTION_WORKERS:
    'runners of the persons read model, partitioned by (project, distinct id); changing it needs `rebuild persons`',
  READ_YOUR_WRITES_TIMEOUT_MS: 'how long a REST write waits for its read model',
  EVENT_DELETION_SCHEDULE: 'cron (UTC) of the queued person-event deletions',
  COHORT_CALCULATION_SCHEDULE: "cron (UTC) of the dynamic cohorts' recalculation check",
  COHORT_RECALCULATION_MINUTES: 'a dynamic cohort older than this is recalculated',
};

/** the settings with their defaults, for `--help` */
export function settingsHelp(): string {
  const defaults = ConfigSchema.parse({}) as Record<string, unknown>;
  const width = Math.max(...Object.keys(SETTINGS).map((k) => k.length));
  return Object.entries(SETTINGS)
    .map(([name, text]) => {
      const d = defaults[name];
      return `  ${name.padEnd(width)}  ${text}${d === undefined ? '' : ` [${String(d)}]`}`;
    })
    .join('\n');
}

export type Config = Readonly<{
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  clickhouseUrl: string | undefined;
  clickhouseDatabase: string;
  chdbPath: string;
  eventstoreUrl: string | undefined;
  initProjectApiKey: string | undefined;
  /** bearer token for GET /metrics; unset: loopback clients only */
  metricsToken: string | undefined;
  /** /_readyz fails for a projection whose position stood still this long with events waiting */
  projectionStuckSeconds: number;
  initPersonalApiKey: string | undefined;
  logLevel: string;
  /** capture, /decide and /flags requests are logged as one summary line per interval */
  logSummarySeconds: number;
  readYourWritesTimeoutMs: number;
  /** runners of the persons read model, one per partition of (project, distinct id) */
  ingestionWorkers: number;
  postgresTimeouts: PoolTimeouts;
  apiRateLimitPerMinute: number;
  apiRateLimitPerIpPerMinute: number;
  connections: ConnectionPolicy;
  captureBodyLimitBytes: number;
  batchBodyLimitBytes: number;
  decideBodyLimitBytes: number;
  flagCacheMaxProjects: number;
  flagEvaluationThreads: number;
  flagEvaluationLimits: Readonly<{
    deadlineMs: number;
    queuePerThread: number;
    queuePerProject: number;
  }>;
  captureLimits: Readonly<{ maxEventBytes: number; maxEventProperties: number }>;
  captureBackpressure: Readonly<{ maxBacklog: number; maxWaitMs: number }>;
  captureQuota: Readonly<{ ratePerSecond: number; burst: number }>;
  eventsPageMaxBytes: number;
  queryGateLimits: Readonly<{ maxRunning: number; maxWaiting: number; waitMs: number }>;
  asyncQueryLimits: Readonly<{ maxRunning: number; keepMinutes: number; maxKept: number }>;
  eventDeletionSchedule: string;
  cohortCalculationSchedule: string;
  cohortRecalculationMinutes: number;
}>;

export class ConfigError extends Error {}

/** Empty variables count as unset, so `PORT= npm start` behaves like no PORT at all. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, v]) => v !== undefined && v !== ''),
  );
  const parsed = ConfigSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`invalid configuration: ${String(issue.path[0])}: ${issue.message}`);
  }
  const c = parsed.data;
  // Node refuses a header timeout longer than the request's (the headers are part of the request).
  if (c.HTTP_HEADERS_TIMEOUT_MS > c.HTTP_REQUEST_TIMEOUT_MS)
    throw new ConfigError(
      'invalid configuration: HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS',
    );
  return {
    port: c.PORT,
    host: c.HOST,
    dataDir: path.resolve(c.DATA_DIR),
    databaseUrl: c.DATABASE_URL,
    clickhouseUrl: c.CLICKHOUSE_URL,
    clickhouseDatabase: c.CLICKHOUSE_DATABASE,
    chdbPath: path.resolve(c.CHDB_PATH ?? path.join(c.DATA_DIR, 'clickhouse')),
    eventstoreUrl: c.EVENTSTORE_URL,
    initProjectApiKey: c.INIT_PROJECT_API_KEY,
    metricsToken: c.METRICS_TOKEN,
    projectionStuckSeconds: c.PROJECTION_STUCK_SECONDS,
    initPersonalApiKey: c.INIT_PERSONAL_API_KEY,
    logLevel: c.LOG_LEVEL,
    logSummarySeconds: c.LOG_SUMMARY_SECONDS,
    readYourWritesTimeoutMs: c.READ_YOUR_WRITES_TIMEOUT_MS,
    ingestionWorkers: c.INGESTION_WORKERS,
    apiRateLimitPerMinute: c.API_RATE_LIMIT_PER_MINUTE,
    apiRateLimitPerIpPerMinute: c.API_RATE_LIMIT_PER_IP_PER_MINUTE,
    connections: {
      headersTimeoutMs: c.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: c.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: c.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: c.HTTP_MAX_CONNECTIONS,
    },
    postgresTimeouts: {
      connectMs: c.PG_CONNECT_TIMEOUT_MS,
      statementMs: c.PG_STATEMENT_TIMEOUT_MS,
      idleInTransactionMs: c.PG_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
    captureBodyLimitBytes: c.CAPTURE_BODY_LIMIT_BYTES,
    batchBodyLimitBytes: c.BATCH_BODY_LIMIT_BYTES,
    decideBodyLimitBytes: c.DECIDE_BODY_LIMIT_BYTES,
    flagCacheMaxProjects: c.FLAG_CACHE_MAX_PROJECTS,
    flagEvaluationThreads: c.FLAG_EVALUATION_THREADS,
    flagEvaluationLimits: {
      deadlineMs: c.FLAG_EVALUATION_DEADLINE_MS,
      queuePerThread: c.FLAG_EVALUATION_QUEUE_PER_THREAD,
      queuePerProject: c.FLAG_EVALUATION_QUEUE_PER_PROJECT,
    },
    eventsPageMaxBytes: c.EVENTS_PAGE_MAX_BYTES,
    queryGateLimits: {
      maxRunning: c.QUERY_MAX_RUNNING,
      maxWaiting: c.QUERY_MAX_WAITING,
      waitMs: c.QUERY_QUEUE_WAIT_MS,
    },
    asyncQueryLimits: {
      maxRunning: c.QUERY_ASYNC_MAX_RUNNING,
      keepMinutes: c.QUERY_ASYNC_KEEP_MINUTES,
      maxKept: c.QUERY_ASYNC_MAX_KEPT,
    },
    captureQuota: {
      ratePerSecond: c.CAPTURE_RATE_LIMIT_EVENTS_PER_SECOND,
      burst: c.CAPTURE_RATE_LIMIT_BURST,
    },
    captureLimits: {
      maxEventBytes: c.CAPTURE_MAX_EVENT_BYTES,
      maxEventProperties: c.CAPTURE_MAX_EVENT_PROPERTIES,
    },
    captureBackpressure: {
      maxBacklog: c.CAPTURE_BACKLOG_MAX,
      maxWaitMs: c.CAPTURE_BACKLOG_WAIT_MS,
    },
    eventDeletionSchedule: c.EVENT_DELETION_SCHEDULE,
    cohortCalculationSchedule: c.COHORT_CALCULATION_SCHEDULE,
    cohortRecalculationMinutes: c.COHORT_RECALCULATION_MINUTES,
  };
}
