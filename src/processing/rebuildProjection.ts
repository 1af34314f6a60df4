import type pg from 'pg';
import type { EventStore } from '../eventStore/eventStore.ts';
import { checkpointId, lockCheckpoint, storeCheckpoint, type PgProjection } from './projection.ts';

export type RebuildResult = Readonly<{ name: string; events: number; position: bigint }>;

/**
 * Replays the log from position 0 into fresh tables in a shadow schema while the live read model
 * keeps serving, then swaps the tables in under the checkpoint lock after a final catch-up. The
 * projection's DDL and handler run unchanged: only the connection's search_path differs.
 */
export async function rebuildProjection(
  store: EventStore,
  pool: pg.Pool,
  projection: PgProjection,
  batchSize = 1000,
): Promise<RebuildResult> {
  const shadow = `rebuild_${projection.name}`;
  const client = await pool.connect();
  let count = 0;
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${shadow} CASCADE`);
    await client.query(`CREATE SCHEMA ${shadow}`);
    // public stays on the path so a handler can still read other read models.
    await client.query(`SET search_path TO ${shadow}, public`);
    await client.query(projection.schema);

    const replay = async (after: bigint, tx: pg.PoolClient): Promise<bigint> => {
      let position = after;
      for (;;) {
        const batch = await store.readAll({ after: position < 0n ? 'start' : position, maxCount: batchSize, filter: projection.filter });
        if (batch.length > 0) {
          await projection.handle(batch, tx);
          count += batch.length;
          position = batch[batch.length - 1]!.position;
        }
        if (batch.length < batchSize) return position;
      }
    };

    // Bulk of the replay in batches of short transactions, without blocking the live projector.
    const head = await store.headPosition();
    let position = -1n;
    for (;;) {
      await client.query('BEGIN');
      const before = position;
      position = await replayOneBatch();
      await client.query('COMMIT');
      if (position === before || position >= head) break;
    }
    async function replayOneBatch(): Promise<bigint> {
      const batch = await store.readAll({ after: position < 0n ? 'start' : position, maxCount: batchSize, filter: projection.filter });
      const wanted = batch.filter((e) => e.position <= head);
      if (wanted.length === 0) return position;
      await projection.handle(wanted, client);
      count += wanted.length;
      return wanted[wanted.length - 1]!.position;
    }

    // Swap: the live projector waits on the checkpoint lock while we catch up and move tables.
    await client.query('BEGIN');
    const id = checkpointId(projection);
    await lockCheckpoint(client, id);
    position = await replay(position, client);
    for (const table of projection.tables) {
      await client.query(`DROP TABLE IF EXISTS public.${table} CASCADE`);
      await client.query(`ALTER TABLE ${shadow}.${table} SET SCHEMA public`);
    }
    await storeCheckpoint(client, id, position);
    await client.query(`DROP SCHEMA ${shadow} CASCADE`);
    await client.query('COMMIT');
    return { name: projection.name, events: count, position };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.query('SET search_path TO DEFAULT').catch(() => undefined);
    client.release();
  }
}
