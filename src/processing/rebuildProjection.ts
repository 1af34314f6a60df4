import type pg from 'pg';
import type { PositionedEvent, RecordedEvent } from '../core/event.ts';
import type { EventStore, ReadAllOptions } from '../eventStore/eventStore.ts';
import { errorText, parkedEventsSchema, recordParked } from './parkedEvents.ts';
import { applyOrPark, isTransientFailure } from './poisonEvents.ts';
import {
  type Concurrently,
  checkpointId,
  dropOtherVersions,
  lockCheckpoint,
  type PgProjection,
  storeCheckpoint,
} from './projection.ts';

/** ≈ 1 KiB an entry (a person and its properties, a mapping): a few hundred MiB at most */
const DEFAULT_MAX_FOLD_ENTRIES = 500_000;
/** connections a bulk fold's save writes on at once (a server's pool is 20) */
const SAVE_CONNECTIONS = 3;
/** pages of the log in flight during a replay (≈ 50–100 MB each as objects at 50,000 events) */
const READ_AHEAD = 2;

export type RebuildResult = Readonly<{
  name: string;
  events: number;
  position: bigint;
  /** events the replay could not apply and set aside (`parked_events`) */
  parked: number;
}>;

/** A range of the log read ahead: for the bulk fold (three columns) or for `handle` (every field). */
type Page = Readonly<{
  through: bigint;
  range: ReadAllOptions;
  positioned?: Promise<PositionedEvent[]>;
  recorded?: Promise<RecordedEvent[]>;
}>;

/** Where a rebuild is: the log position it has applied, the head it is replaying up to, events applied. */
export type RebuildProgress = Readonly<{
  name: string;
  position: bigint;
  head: bigint;
  events: number;
}>;

/**
 * Replays the log from position 0 into fresh tables in a shadow schema while the live read model
 * keeps serving, then swaps the tables in under the checkpoint lock after a final catch-up. The
 * projection's DDL and handler run unchanged: only the connection's search_path differs.
 */
export async function rebuildProjection(
  store: EventStore,
  pool: pg.Pool,
  projection: PgProjection,
  options: {
    batchSize?: number;
    /** a bulk fold holding more entries is saved and the replay goes on page by page */
    maxFoldEntries?: number;
    onProgress?: (p: RebuildProgress) => void;
    /** stops the replay between pages (the live read model is left as it was) */
    signal?: AbortSignal;
    /** false: replay through `handle` only (what a rebuild falls back to when the bulk fold fails) */
    bulkFold?: boolean;
    log?: (message: string) => void;
  } = {},
): Promise<RebuildResult> {
  // Large pages: a projection loads and saves what a batch touches once per batch, so the replay
  // runs in a few big statements instead of thousands of small ones (issue #11: 200,000 events
  // rebuilt into persons in 26 s with pages of 1,000, 10 s with 50,000).
  const batchSize = options.batchSize ?? 50_000;
  const maxFoldEntries = options.maxFoldEntries ?? DEFAULT_MAX_FOLD_ENTRIES;
  const shadow = `rebuild_${projection.name}`;
  let failedFold: BulkFoldFailed;
  const client = await pool.connect();
  let count = 0;
  let parked = 0;
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${shadow} CASCADE`);
    await client.query(`CREATE SCHEMA ${shadow}`);
    // public stays on the path so a handler can still read other read models.
    await client.query(`SET search_path TO ${shadow}, public`);
    await client.query(projection.schema);
    // the events this replay parks, swapped in with the tables (unqualified: the shadow's table)
    await client.query(parkedEventsSchema);
    /** `handle` on a batch inside the open transaction, undone alone when it fails */
    const handleAtSavepoint = async (events: RecordedEvent[]) => {
      await client.query('SAVEPOINT apply');
      try {
        await projection.handle(events, client);
      } catch (error) {
        await client.query('ROLLBACK TO SAVEPOINT apply');
        throw error;
      }
      await client.query('RELEASE SAVEPOINT apply');
    };
    /** as the live runner does: a failing page is split, the event that fails alone parked */
    const applyParking = (events: RecordedEvent[]) =>
      applyOrPark(events, {
        apply: handleAtSavepoint,
        park: (event, error, attempts) =>
          recordParked(client, projection.name, event, error, attempts).then(() => {
            parked++;
            options.log?.(
              `rebuild ${projection.name}: parked the event at position ${event.position} (${event.type}, stream ${event.streamName}): ${errorText(error)}`,
            );
          }),
        // the replay of a page is deterministic: a lone event that fails once is parked
        attempts: 1,
        retryTransient: false,
        delay: async () => undefined,
      });

    let position = -1n;
    /**
     * The log up to `upTo` in ranges of `batchSize` positions, READ_AHEAD of them read at once on
     * their own connections while the fold works (issue #11: 200,000 events waited 2.5 s of 4.6 s
     * for pages read one at a time; the rows are still decoded on this thread, so reading ahead
     * saved 5–10 %, not all of it).
     */
    async function* pagesUpTo(upTo: bigint) {
      const span = BigInt(batchSize);
      let from = position;
      const queue: Page[] = [];
      const issue = () => {
        if (from >= upTo) return;
        const after = from;
        const through = after + span < upTo ? after + span : upTo;
        const range: ReadAllOptions = {
          after: after < 0n ? 'start' : after,
          before: through + 1n,
          filter: projection.filter,
        };
        // a bulk fold reads three columns of each event (`readPositioned`), `handle` every field
        const page: Page = fold
          ? { through, range, positioned: store.readPositioned(range) }
          : { through, range, recorded: store.readAll(range) };
        // awaited in turn below; not unhandled meanwhile
        (page.positioned ?? page.recorded)?.catch(() => undefined);
        queue.push(page);
        from = through;
      };
      for (let i = 0; i < READ_AHEAD; i++) issue();
      for (let next = queue.shift(); next; next = queue.shift()) {
        await (next.positioned ?? next.recorded);
        issue();
        yield next;
      }
    }
    /**
     * The catch-up under the checkpoint lock, by count (the head moved until the lock was held):
     * applies the next page after `position`, returns how many events it held.
     */
    const applyNext = async (): Promise<number> => {
      const batch = await store.readAll({
        after: position < 0n ? 'start' : position,
        maxCount: batchSize,
        filter: projection.filter,
      });
      if (batch.length === 0) return 0;
      await applyParking(batch);
      count += batch.length;
      position = batch[batch.length - 1]!.position;
      options.onProgress?.({ name: projection.name, position, head, events: count });
      return batch.length;
    };

    // Bulk of the replay, up to the head seen now, in short transactions that never block the live projector.
    let head = await store.headPosition();
    // In memory first, when the projection can: saved once at the end, or when it grows past the
    // bound, after which the replay goes on page by page through `handle`.
    let fold = options.bulkFold === false ? undefined : projection.bulkFold?.();
    // A bulk fold is saved into empty tables: their secondary indexes are built once afterwards
    // instead of kept up row by row (issue #11: the save of a 1,000,000-event fold wrote persons
    // in 1.7–2.0 s with every index, 0.9–1.0 s with the keys and the rest built after).
    const deferred = fold ? await dropSecondaryIndexes(client, shadow) : [];
    // Into empty shadow tables no one else reads: the save's writes need no shared transaction (a
    // failed rebuild drops the schema), so they run SAVE_CONNECTIONS at a time on connections of
    // their own and Postgres uses more than one core for them.
    const concurrently: Concurrently = async (writes) => {
      let next = 0;
      const worker = async () => {
        const c = await pool.connect();
        try {
          await c.query(`SET search_path TO ${shadow}, public`);
          for (let i = next++; i < writes.length; i = next++) await writes[i]!(c);
        } finally {
          await c.query('SET search_path TO DEFAULT').catch(() => undefined);
          c.release();
        }
      };
      await Promise.all(Array.from({ length: Math.min(SAVE_CONNECTIONS, writes.length) }, worker));
    };
    const saveFold = async () => {
      if (!fold) return;
      await fold.save(client, concurrently);
      fold = undefined;
      for (const definition of deferred) await client.query(definition);
    };
    for await (const page of pagesUpTo(head)) {
      options.signal?.throwIfAborted();
      // a page read for the fold, which has been saved since, is read again as `handle` takes it
      const recorded =
        (await page.recorded) ?? (fold ? undefined : await store.readAll(page.range));
      const events = recorded ?? (await page.positioned!);
      if (events.length > 0) {
        if (fold) {
          await withFold(() => {
            fold!.apply(events);
            return fold!.size() > maxFoldEntries ? saveFold() : undefined;
          });
        } else {
          await client.query('BEGIN');
          await applyParking(recorded!);
          await client.query('COMMIT');
        }
        count += events.length;
        position = events[events.length - 1]!.position;
      }
      options.onProgress?.({ name: projection.name, position: page.through, head, events: count });
    }
    await withFold(saveFold);

    // Swap: the live projector waits on the checkpoint lock while we catch up and move tables.
    await client.query('BEGIN');
    const id = checkpointId(projection);
    await lockCheckpoint(client, id);
    // a partitioned read model's runners each hold their own row: all wait while the tables move
    const partitions = (projection.partitions ?? []).map(checkpointId);
    for (const partition of partitions) await lockCheckpoint(client, partition);
    head = await store.headPosition();
    while ((await applyNext()) === batchSize);
    for (const table of projection.tables) {
      await client.query(`DROP TABLE IF EXISTS public.${table} CASCADE`);
      await client.query(`ALTER TABLE ${shadow}.${table} SET SCHEMA public`);
    }
    await storeCheckpoint(client, id, position);
    for (const partition of partitions) await storeCheckpoint(client, partition, position);
    // the rows of another partition count (`<name>#<i>@…`) describe tables no longer there
    await client.query(
      `DELETE FROM public.projection_checkpoints WHERE starts_with(id, $1) AND NOT (id = ANY($2::text[]))`,
      [`${projection.name}#`, partitions],
    );
    await client.query('DELETE FROM public.parked_events WHERE read_model = $1', [projection.name]);
    await client.query(
      `INSERT INTO public.parked_events SELECT * FROM ${shadow}.parked_events WHERE read_model = $1`,
      [projection.name],
    );
    // the tables now are this version's: an older version's checkpoint no longer describes them
    await dropOtherVersions(client, projection);
    await client.query(`DROP SCHEMA ${shadow} CASCADE`);
    await client.query('COMMIT');
    return { name: projection.name, events: count, position, parked };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    if (!(error instanceof BulkFoldFailed)) throw error;
    failedFold = error;
  } finally {
    await client.query('SET search_path TO DEFAULT').catch(() => undefined);
    client.release();
  }
  // The fold holds no event positions: which event it failed on is found by replaying again
  // through `handle`, page by page, where a failing page is split and its culprit parked.
  options.log?.(
    `rebuild ${projection.name}: the bulk fold failed (${errorText(failedFold.cause)}); replaying page by page`,
  );
  return rebuildProjection(store, pool, projection, { ...options, bulkFold: false });
}

/** The in-memory fold of a replay failed: on which event is not known (see the fallback above). */
class BulkFoldFailed extends Error {}

/** Runs a step of the bulk fold; a failure about the events (not the stores) abandons the fold. */
async function withFold(step: () => Promise<void> | undefined): Promise<void> {
  try {
    await step();
  } catch (error) {
    if (isTransientFailure(error)) throw error;
    throw new BulkFoldFailed('bulk fold failed', { cause: error });
  }
}

/**
 * Drops the indexes of `schema`'s tables that back no constraint (keys and unique constraints
 * stay: a save may upsert on them) and returns the statements that create them again.
 */
async function dropSecondaryIndexes(client: pg.PoolClient, schema: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `SELECT quote_ident(n.nspname) || '.' || quote_ident(ic.relname) AS name,
            pg_get_indexdef(i.indexrelid) AS definition
       FROM pg_index i
       JOIN pg_class ic ON ic.oid = i.indexrelid
       JOIN pg_namespace n ON n.oid = ic.relnamespace
      WHERE n.nspname = $1
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
    [schema],
  );
  for (const { name } of rows) await client.query(`DROP INDEX ${name}`);
  return rows.map((r) => r.definition);
}
