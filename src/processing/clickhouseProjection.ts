import type { Event, RecordedEvent } from '../core/event.ts';
import type { ClickHouse } from '../runtime/clickhouse.ts';
import type { LogChunk } from './logInClickHouse.ts';
import type { EventFilter, PgProjection } from './projection.ts';

/**
 * A read model in ClickHouse. ClickHouse has no transaction to share with the checkpoint, so
 * `insert` must be idempotent for a given dedup token: the runner re-sends a batch with the same
 * token after a crash and ClickHouse drops the block if it already landed.
 */
export type ChProjection<E extends Event = Event> = Readonly<{
  name: string;
  version: number;
  filter: EventFilter<E>;
  /** CREATE statements; run at start, each with `database` as the target */
  ddl: (database: string) => string[];
  /** drops the tables (for a rebuild from 0) */
  drop: (database: string) => string[];
  /** the tables `ddl` creates: a rebuild beside a running server builds them elsewhere and swaps them in */
  tables: readonly string[];
  /**
   * MergeTree settings by table, for how the table is written (not what it holds): set on new and
   * existing tables alike at every start of the runner, each only where the server knows it (see
   * `createTables`); a rebuild's shadow tables get them once swapped in
   */
  tableSettings?: Readonly<Record<string, Readonly<Record<string, number>>>>;
  insert(
    ch: ClickHouse,
    events: readonly RecordedEvent<E>[],
    dedupToken: DedupToken,
  ): Promise<void>;
  /**
   * For a replay into fresh tables, when the read model keeps only a final state: events gathered
   * in memory and written in a few large inserts instead of one per block.
   */
  bulk?: () => ChBulk<E>;
  /**
   * For a replay that ClickHouse reads the log for (`LogInClickHouse`): builds the read model's
   * rows from a chunk of the log in SQL, into `ch` (or into `bulk`, when the replay has one), and
   * returns the positions of the chunk's events it could not reproduce exactly as `insert` would;
   * the replay passes those through `insert` (or `bulk.add`).
   */
  fromLogChunk?: (
    ch: ClickHouse,
    chunk: LogChunk,
    bulk: ChBulk<E> | undefined,
  ) => Promise<readonly bigint[]>;
}>;

export type ChBulk<E extends Event = Event> = {
  add(events: readonly RecordedEvent<E>[]): void;
  /** entries held: the caller writes when it passes its bound */
  size(): number;
  /** writes what was gathered, as of log position `upTo`, and starts empty again */
  write(ch: ClickHouse, upTo: bigint): Promise<void>;
};

/**
 * The block's deduplication token; null for a table that is dropped when an insert fails (a
 * rebuild's shadow tables): no deduplication, which cost a quarter of chDB's insert time
 * (issue #11: 200,000 events rows 2.6–2.9 s with tokens, 2.0 s without).
 */
export type DedupToken = string | null;

export const dedupSettings = (token: DedupToken) =>
  token === null ? { insert_deduplicate: 0 as const } : { insert_deduplication_token: token };

/** Declares a ClickHouse projection; `E` types `filter.eventTypes` and the events `insert` gets. */
export const chProjection = <E extends Event>(projection: ChProjection<E>): ChProjection<E> =>
  projection;

/**
 * Creates the projection's tables in `database` (if missing) and sets its `tableSettings`. A
 * setting this server does not list in `system.merge_tree_settings` (an older ClickHouse) is left
 * out: such settings tune merges, and the table works the same without them.
 */
export async function createTables(
  ch: ClickHouse,
  projection: ChProjection,
  database: string,
): Promise<void> {
  for (const statement of projection.ddl(database)) await ch.client.command({ query: statement });
  const byTable = Object.entries(projection.tableSettings ?? {});
  if (byTable.length === 0) return;
  const result = await ch.client.query({
    query: 'SELECT name FROM system.merge_tree_settings',
    format: 'JSONEachRow',
  });
  const known = new Set(((await result.json()) as { name: string }[]).map((r) => r.name));
  for (const [table, settings] of byTable) {
    const set = Object.entries(settings).filter(([name]) => known.has(name));
    if (set.length > 0)
      await ch.client.command({
        query: `ALTER TABLE ${database}.${table} MODIFY SETTING ${set.map(([k, v]) => `${k} = ${v}`).join(', ')}`,
      });
  }
}

/** Any read model a runner keeps: what read-your-writes waits on. */
export type ReadModel = Pick<PgProjection, 'name' | 'schema'> | Pick<ChProjection, 'name' | 'ddl'>;

/** The runner's name for a read model: `clickhouse:<name>` for ClickHouse ones. */
export const readModelName = (p: ReadModel): string =>
  'ddl' in p ? `clickhouse:${p.name}` : p.name;

export const chCheckpointId = (p: ChProjection) => `clickhouse:${p.name}@${p.version}`;
