import pg from 'pg';

// int8 columns (positions, revisions) stay strings unless parsed deliberately; counts are parsed here.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

/** Bounds on every Postgres connection of a pool, so an outage or a stuck client cannot hold one forever. */
export type PoolTimeouts = Readonly<{
  /** waiting for a connection (a free pool slot or a new session); past it the request fails fast */
  connectMs: number;
  /** one statement, enforced by the server (`statement_timeout`) */
  statementMs: number;
  /** a transaction left open with nothing running (`idle_in_transaction_session_timeout`) */
  idleInTransactionMs: number;
}>;

export const DEFAULT_POOL_TIMEOUTS: PoolTimeouts = {
  connectMs: 2_000,
  statementMs: 30_000,
  idleInTransactionMs: 60_000,
};

export function createPool(
  connectionString: string,
  max = 10,
  timeouts: PoolTimeouts = DEFAULT_POOL_TIMEOUTS,
): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: timeouts.connectMs,
    statement_timeout: timeouts.statementMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
    // A frozen server answers nothing: the client gives up a little after the server-side limit would have.
    query_timeout: timeouts.statementMs + 5_000,
    keepAlive: true,
  });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => undefined);
  // Nor must a checked-out client's: the query in progress rejects with the error anyway.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * A pooled client for `fn`, which opens and commits its transaction itself (the event log folds
 * BEGIN and COMMIT into its own statements); rolled back if `fn` throws, released either way.
 */
export async function withClientTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    return await fn(client);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

export const withTransaction = <T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> =>
  withClientTransaction(pool, async (client) => {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  });

export type Queryable = Pick<pg.PoolClient, 'query'>;

// Connection-level failures (socket codes and SQLSTATE classes 08, 57P0x) and client-side
// timeouts: the database is unreachable or overloaded, not the request wrong. Storage failures too
// (issue #26): the disk full, memory short, an I/O error (SQLSTATE class 53 insufficient_resources
// and 58 system errors; ENOSPC, EIO, EMFILE… from a local store) refuse every write until an
// operator or time clears them, whatever the request.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOSPC',
  'EDQUOT',
  'EIO',
  'ENOMEM',
  'EMFILE',
  'ENFILE',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53000', // insufficient_resources
  '53100', // disk_full
  '53200', // out_of_memory
  '53300', // too_many_connections
  '53400', // configuration_limit_exceeded
  '57P01',
  '57P02',
  '57P03',
  '58000', // system_error
  '58030', // io_error
]);
const UNAVAILABLE_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|connection error|Query read timeout|the database system is (starting up|shutting down|in recovery mode)|Client was closed|Cannot use a pool after calling end/i;

/** Whether `error` means Postgres (or another server over a socket, e.g. ClickHouse) cannot be reached right now: answer 503 and let the client retry; not a bug. */
export function isDependencyUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  return error instanceof Error && UNAVAILABLE_MESSAGES.test(error.message);
}
