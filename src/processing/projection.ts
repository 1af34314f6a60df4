import type pg from 'pg';
import type { Event, PositionedEvent, RecordedEvent } from '../core/event.ts';

/** The events a read model folds: its subscription reads only these types (and stream prefixes). */
export type EventFilter<E extends Event = Event> = Readonly<{
  streamPrefixes?: readonly string[];
  eventTypes?: readonly E['type'][];
}>;

/**
 * A Postgres read model built from the log, typed by the union of the events it folds. `schema`
 * creates its tables with unqualified names, so the same DDL and handler can build a shadow copy in
 * another schema during a rebuild.
 */
export type PgProjection<E extends Event = Event> = Readonly<{
  name: string;
  version: number;
  tables: readonly string[];
  schema: string;
  filter: EventFilter<E>;
  /** events per transaction (default 500); read models that load state per batch want bigger ones */
  batchSize?: number;
  /** how long to let a batch fill before applying it (default 0: at once) */
  maxWaitMs?: number;
  /** applies a batch inside the caller's transaction; never commits */
  handle(events: readonly RecordedEvent<E>[], tx: pg.PoolClient): Promise<void>;
  /**
   * For rebuilds (optional): a fold that keeps its state in memory from one page to the next, so
   * a replay into empty tables neither loads what each page touches nor writes it page by page;
   * the rebuild saves it when it grows past a bound (then goes on with `handle`) or at the end.
   */
  bulkFold?: () => BulkFold<E>;
  /**
   * The checkpoint row's id when it is not `<name>@<version>`: one partition's runner of a read
   * model that several runners build (`persons#<i>@<version>`, docs/SCALING.md).
   */
  checkpoint?: string;
  /**
   * The runners of a read model built by several (one per partition, each with its `checkpoint`):
   * the server runs these instead, and a rebuild locks and moves their checkpoints too.
   */
  partitions?: readonly PgProjection<E>[];
}>;

export type BulkFold<E extends Event = Event> = Readonly<{
  apply(events: readonly PositionedEvent<E>[]): void;
  /** entries held (persons, mappings, …): what bounds the fold's memory */
  size(): number;
  /**
   * writes everything folded so far into the (empty) tables: inside the caller's transaction, or,
   * given `concurrently`, as writes of separate tables run at once on connections of their own
   */
  save(tx: pg.PoolClient, concurrently?: Concurrently): Promise<void>;
}>;

/** Runs writes at once, each on a connection of its own that sees the same tables as the caller's. */
export type Concurrently = (
  writes: readonly ((client: pg.PoolClient) => Promise<unknown>)[],
) => Promise<void>;

/** Declares a Postgres projection; `E` types `filter.eventTypes` and the events `handle` gets. */
export const pgProjection = <E extends Event>(projection: PgProjection<E>): PgProjection<E> =>
  projection;

export const checkpointId = (p: PgProjection) => p.checkpoint ?? `${p.name}@${p.version}`;

export const checkpointsSchema = `
CREATE TABLE IF NOT EXISTS projection_checkpoints (
  id          text PRIMARY KEY,
  position    bigint NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
-- ClickHouse projections note the batch they are writing before they write it (see clickhouseProjectionRunner)
ALTER TABLE projection_checkpoints ADD COLUMN IF NOT EXISTS pending_from bigint;
ALTER TABLE projection_checkpoints ADD COLUMN IF NOT EXISTS pending_to bigint;`;

/** Locks the checkpoint row for the rest of the transaction: one writer per read model at a time. */
export async function lockCheckpoint(tx: pg.PoolClient, id: string): Promise<bigint> {
  await tx.query(
    'INSERT INTO public.projection_checkpoints (id, position) VALUES ($1, -1) ON CONFLICT (id) DO NOTHING',
    [id],
  );
  const { rows } = await tx.query<{ position: string }>(
    'SELECT position FROM public.projection_checkpoints WHERE id = $1 FOR UPDATE',
    [id],
  );
  return BigInt(rows[0]!.position);
}

export async function storeCheckpoint(
  tx: pg.PoolClient,
  id: string,
  position: bigint,
): Promise<void> {
  await tx.query(
    'UPDATE public.projection_checkpoints SET position = $2, updated_at = now() WHERE id = $1',
    [id, position.toString()],
  );
}

export async function readCheckpoint(pool: pg.Pool, id: string): Promise<bigint> {
  const { rows } = await pool.query<{ position: string }>(
    'SELECT position FROM public.projection_checkpoints WHERE id = $1',
    [id],
  );
  return rows[0] ? BigInt(rows[0].position) : -1n;
}

/** Forgets the checkpoints of the projection's other versions (once this version's is in place). */
export async function dropOtherVersions(
  tx: pg.PoolClient,
  projection: PgProjection,
): Promise<void> {
  await tx.query(
    `DELETE FROM public.projection_checkpoints
      WHERE left(id, length(id) - length(split_part(reverse(id), '@', 1)) - 1) = $1 AND id <> $2`,
    [projection.name, checkpointId(projection)],
  );
}
