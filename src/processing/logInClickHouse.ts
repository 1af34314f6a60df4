import type { ClickHouse } from '../runtime/clickhouse.ts';
import { chString, postgresInClickHouse } from '../runtime/postgresInClickHouse.ts';

/**
 * The Postgres event log as ClickHouse reads it itself, through the `postgresql` table function:
 * a rebuild copies the log there in chunks and the read models build their rows in SQL, so Node
 * neither decodes the log nor encodes rows (issue #11). Only for embedded chDB, which runs on the
 * machine that reaches Postgres with the server's own URL.
 */
export type LogInClickHouse = Readonly<{
  table: string;
  /** a message without the password the table function carries (ClickHouse may quote the statement) */
  redact: (message: string) => string;
}>;

/** The log of a Postgres event store at `connectionString`; undefined when ClickHouse cannot reach it by TCP. */
export function postgresLogInClickHouse(connectionString: string): LogInClickHouse | undefined {
  const postgres = postgresInClickHouse(connectionString);
  return postgres && { table: postgres.table('event_log'), redact: postgres.redact };
}

/**
 * Whether ClickHouse can read the log (a Postgres that asks for TLS, or that it cannot reach, it
 * cannot): if not, the caller replays through Node instead.
 */
export async function reachesLog(ch: ClickHouse, log: LogInClickHouse): Promise<boolean> {
  try {
    await ch.client.command({ query: `SELECT position FROM ${log.table} WHERE position = 0` });
    return true;
  } catch {
    return false;
  }
}

/**
 * Positions `after` < p ≤ `upTo` of the log, copied into a ClickHouse table: `position`, `type`,
 * `data`; `types` holds, per event type in it, how many rows it has and the last one's position.
 */
export type LogChunk = Readonly<{
  table: string;
  after: bigint;
  upTo: bigint;
  types: ReadonlyMap<string, Readonly<{ rows: number; last: bigint }>>;
}>;

/**
 * Copies a range of the log (the given event types) into a Memory table in `database`, hands it to
 * `use`, and drops it. One read of Postgres serves every read model replayed from the chunk.
 */
export async function withLogChunk<T>(
  ch: ClickHouse,
  log: LogInClickHouse,
  database: string,
  range: Readonly<{ after: bigint; upTo: bigint; eventTypes: readonly string[] }>,
  use: (chunk: LogChunk) => Promise<T>,
): Promise<T> {
  const table = `${database}.log_chunk`;
  // Blocks of 8,192 rows rather than one of 50,000: the read models' statements over the chunk
  // then run on both of chDB's threads (a 1,000,000-event replay: 21.0 / 21.6 s → 17.5 / 18.2).
  await ch.client.command({ query: `DROP TABLE IF EXISTS ${table}` });
  await ch.client
    .command({
      query: `CREATE TABLE ${table} ENGINE = Memory AS
        SELECT position, type, data FROM ${log.table}
         WHERE position > ${range.after} AND position <= ${range.upTo}
           AND type IN (${range.eventTypes.map(chString).join(', ')})
        SETTINGS max_block_size = 8192`,
    })
    .catch((error: unknown) => {
      throw new Error(log.redact(error instanceof Error ? error.message : String(error)));
    });
  try {
    const summary = await ch.client.query({
      query: `SELECT type, count(), max(position) FROM ${table} GROUP BY type`,
      format: 'JSONCompactEachRow',
    });
    const types = new Map(
      ((await summary.json()) as [string, string | number, string | number][]).map(
        ([type, rows, last]) => [type, { rows: Number(rows), last: BigInt(last) }] as const,
      ),
    );
    return await use({ table, after: range.after, upTo: range.upTo, types });
  } finally {
    await ch.client.command({ query: `DROP TABLE IF EXISTS ${table}` });
  }
}

/** The positions a query over a chunk selects (as `position`), for the events Node must replay. */
export async function chunkPositions(ch: ClickHouse, query: string): Promise<bigint[]> {
  const result = await ch.client.query({ query, format: 'JSONCompactEachRow' });
  const rows = (await result.json()) as [string | number][];
  return rows.map(([p]) => BigInt(p));
}
