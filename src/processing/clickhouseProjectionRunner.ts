import type pg from 'pg';
import type { RecordedEvent } from '../core/event.ts';
import { type Queryable, withTransaction } from '../db/postgres.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { ClickHouse } from '../runtime/clickhouse.ts';
import { createBatchingSubscriber } from './batchingSubscriber.ts';
import { type ChProjection, chCheckpointId, createTables } from './clickhouseProjection.ts';
import { errorText, recordParked } from './parkedEvents.ts';
import { isTransientFailure } from './poisonEvents.ts';
import type { ProjectionRunner, RunnerOptions } from './projectionRunner.ts';

type CheckpointRow = { position: string; pending_from: string | null; pending_to: string | null };

/**
 * Exactly-once into ClickHouse without a shared transaction:
 *   1. note the batch range as pending in Postgres,  2. insert with a token derived from the range,
 *   3. advance the checkpoint and clear the pending range.
 * After a crash between 1 and 3 the same range is re-read and re-sent with the same token, which
 * ClickHouse deduplicates; a crash before 1 just replays the batch from the checkpoint.
 * A session advisory lock keeps one writer per projection across processes; another process stands
 * by until it is released.
 */
export function createClickHouseProjectionRunner(
  store: EventStore,
  pool: pg.Pool,
  ch: ClickHouse,
  projection: ChProjection,
  options: RunnerOptions = {},
): ProjectionRunner {
  const id = chCheckpointId(projection);
  const token = (from: bigint, to: bigint) => `${id}:${from}-${to}`;
  let lockClient: pg.PoolClient | undefined;
  let standby = false;
  let stopping = false;
  let standbyLoop: Promise<void> = Promise.resolve();

  async function readCheckpoint(): Promise<CheckpointRow> {
    await pool.query(
      'INSERT INTO projection_checkpoints (id, position) VALUES ($1, -1) ON CONFLICT (id) DO NOTHING',
      [id],
    );
    const { rows } = await pool.query<CheckpointRow>(
      'SELECT position, pending_from, pending_to FROM projection_checkpoints WHERE id = $1',
      [id],
    );
    return rows[0]!;
  }

  /** the checkpoint at `to`, the pending range cleared (on the pool, or in the caller's transaction) */
  const confirm = (to: bigint, db: Queryable = pool) =>
    db.query(
      'UPDATE projection_checkpoints SET position = $2, pending_from = NULL, pending_to = NULL, updated_at = now() WHERE id = $1',
      [id, to.toString()],
    );

  const loop = createBatchingSubscriber({
    store,
    filter: projection.filter,
    // ClickHouse wants few, large inserts: every insert is a part to merge later. Waiting a little
    // for a batch to fill costs lag (bounded by maxWaitMs) and saves far more CPU under load.
    batchSize: options.batchSize ?? 20_000,
    maxWaitMs: options.maxWaitMs ?? 200,
    log: options.log,
    name: id,
    apply: async (batch) => {
      const fresh = batch.filter((e) => e.position > loop.position());
      if (fresh.length === 0) return loop.position();
      const from = fresh[0]!.position;
      const to = fresh[fresh.length - 1]!.position;
      await pool.query(
        'UPDATE projection_checkpoints SET pending_from = $2, pending_to = $3 WHERE id = $1',
        [id, from.toString(), to.toString()],
      );
      await projection.insert(ch, fresh, token(from, to));
      await confirm(to);
      return to;
    },
    // The parked row and the checkpoint past the event (its pending range cleared) commit together.
    park: (event, error, attempts) =>
      withTransaction(pool, async (tx) => {
        if (event.position <= loop.position()) return loop.position();
        await recordParked(tx, `clickhouse:${projection.name}`, event, error, attempts);
        await confirm(event.position, tx);
        return event.position;
      }),
  });

  /**
   * Finishes a batch a previous process noted but may not have written. A range that ClickHouse
   * refuses never landed (an insert is one block, all or nothing): it is left to the subscription,
   * which applies it again from the checkpoint, splitting it and parking what fails.
   */
  async function recover(cp: CheckpointRow): Promise<void> {
    if (cp.pending_to === null || cp.pending_from === null) return;
    const from = BigInt(cp.pending_from);
    const to = BigInt(cp.pending_to);
    const events: RecordedEvent[] = [];
    let after = BigInt(cp.position);
    while (after < to) {
      const batch = await store.readAll({
        after: after < 0n ? 'start' : after,
        maxCount: 5000,
        filter: projection.filter,
      });
      const wanted = batch.filter((e) => e.position <= to);
      events.push(...wanted);
      if (wanted.length < batch.length || batch.length === 0) break;
      after = batch[batch.length - 1]!.position;
    }
    try {
      if (events.length > 0) await projection.insert(ch, events, token(from, to));
    } catch (error) {
      if (isTransientFailure(error)) throw error;
      options.log?.(
        `projection ${id}: the pending batch at positions ${from}–${to} failed again (${errorText(error)}); replaying it from the checkpoint`,
      );
      return;
    }
    await confirm(to);
  }

  async function begin(): Promise<void> {
    standby = false;
    await recover(await readCheckpoint());
    loop.start(BigInt((await readCheckpoint()).position));
  }

  return {
    name: `clickhouse:${projection.name}`,
    async start() {
      await createTables(ch, projection, ch.database);
      stopping = false;
      standbyLoop = (async () => {
        while (!stopping) {
          const client = await pool.connect();
          client.on('error', () => undefined); // a dropped session also drops the lock
          const { rows } = await client.query<{ ok: boolean }>(
            'SELECT pg_try_advisory_lock(hashtext($1)) AS ok',
            [id],
          );
          if (rows[0]!.ok) {
            lockClient = client;
            return;
          }
          client.release();
          standby = true;
          await new Promise((r) => setTimeout(r, 2000).unref());
        }
      })();
      await Promise.race([standbyLoop, new Promise((r) => setTimeout(r, 100))]);
      if (lockClient) return begin();
      void standbyLoop
        .then(() => (lockClient && !stopping ? begin() : undefined))
        .catch(() => undefined);
    },
    async stop() {
      stopping = true;
      await standbyLoop;
      await loop.stop();
      if (lockClient) {
        await lockClient
          .query('SELECT pg_advisory_unlock(hashtext($1))', [id])
          .catch(() => undefined);
        lockClient.release();
        lockClient = undefined;
      }
    },
    waitFor: (target, timeoutMs) => loop.waitFor(target, timeoutMs),
    status: () => {
      const lastError = loop.lastError();
      return {
        name: `clickhouse:${projection.name}`,
        running: loop.running(),
        standby,
        position: loop.position(),
        ...(lastError ? { lastError } : {}),
      };
    },
    caughtUp: () => loop.caughtUp(),
  };
}
