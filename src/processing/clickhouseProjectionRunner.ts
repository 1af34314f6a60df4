import type pg from 'pg';
import type { RecordedEvent } from '../core/event.ts';
import type { EventStore, Subscription } from '../eventStore/eventStore.ts';
import type { ClickHouse } from '../runtime/clickhouse.ts';
import { chCheckpointId, type ChProjection } from './clickhouseProjection.ts';
import type { ProjectionRunner, RunnerOptions } from './projectionRunner.ts';

type CheckpointRow = { position: string; pending_from: string | null; pending_to: string | null };

/**
 * Exactly-once into ClickHouse without a shared transaction:
 *   1. note the batch range as pending in Postgres,  2. insert with a token derived from the range,
 *   3. advance the checkpoint and clear the pending range.
 * After a crash between 1 and 3 the same range is re-read and re-sent with the same token, which
 * ClickHouse deduplicates; a crash before 1 just replays the batch from the checkpoint.
 * A session advisory lock keeps one writer per projection across processes.
 */
export function createClickHouseProjectionRunner(
  store: EventStore,
  pool: pg.Pool,
  ch: ClickHouse,
  projection: ChProjection,
  options: RunnerOptions = {},
): ProjectionRunner {
  const id = chCheckpointId(projection);
  const batchSize = options.batchSize ?? 20_000;
  // ClickHouse wants few, large inserts: every insert is a part to merge later. Waiting a little
  // for a batch to fill costs lag (bounded by this) and saves far more CPU under load.
  const maxWaitMs = options.maxWaitMs ?? 200;
  let buffer: RecordedEvent[] = [];
  let position = -1n;
  let running = false;
  let lastError: string | undefined;
  let subscription: Subscription | undefined;
  let lockClient: pg.PoolClient | undefined;
  let standby = false;
  let stopping = false;
  let standbyLoop: Promise<void> = Promise.resolve();
  let flushing: Promise<void> = Promise.resolve();
  let flushScheduled = false;
  let waiters: Array<{ position: bigint; resolve: (ok: boolean) => void }> = [];
  let markCaughtUp: () => void = () => undefined;
  let caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));

  const settle = () => {
    const pending: typeof waiters = [];
    for (const w of waiters) (w.position <= position ? w.resolve(true) : pending.push(w));
    waiters = pending;
  };
  const token = (from: bigint, to: bigint) => `${id}:${from}-${to}`;

  async function readCheckpoint(): Promise<CheckpointRow> {
    await pool.query('INSERT INTO projection_checkpoints (id, position) VALUES ($1, -1) ON CONFLICT (id) DO NOTHING', [id]);
    const { rows } = await pool.query<CheckpointRow>('SELECT position, pending_from, pending_to FROM projection_checkpoints WHERE id = $1', [id]);
    return rows[0]!;
  }

  async function write(events: readonly RecordedEvent[]): Promise<void> {
    const from = events[0]!.position;
    const to = events[events.length - 1]!.position;
    await pool.query('UPDATE projection_checkpoints SET pending_from = $2, pending_to = $3 WHERE id = $1', [id, from.toString(), to.toString()]);
    await projection.insert(ch, events, token(from, to));
    await pool.query(
      'UPDATE projection_checkpoints SET position = $2, pending_from = NULL, pending_to = NULL, updated_at = now() WHERE id = $1',
      [id, to.toString()],
    );
    position = to;
    settle();
  }

  /** Finishes a batch a previous process noted but may not have written. */
  async function recover(cp: CheckpointRow): Promise<void> {
    if (cp.pending_to === null || cp.pending_from === null) return;
    const from = BigInt(cp.pending_from);
    const to = BigInt(cp.pending_to);
    const events: RecordedEvent[] = [];
    let after = BigInt(cp.position);
    while (after < to) {
      const batch = await store.readAll({ after: after < 0n ? 'start' : after, maxCount: 5000, filter: projection.filter });
      const wanted = batch.filter((e) => e.position <= to);
      events.push(...wanted);
      if (wanted.length < batch.length || batch.length === 0) break;
      after = batch[batch.length - 1]!.position;
    }
    if (events.length > 0) await projection.insert(ch, events, token(from, to));
    await pool.query(
      'UPDATE projection_checkpoints SET position = $2, pending_from = NULL, pending_to = NULL WHERE id = $1',
      [id, to.toString()],
    );
  }

  async function applyBatch(batch: RecordedEvent[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const fresh = batch.filter((e) => e.position > position);
        if (fresh.length > 0) await write(fresh);
        lastError = undefined;
        return;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
        options.log?.(`projection ${id}: batch failed (attempt ${attempt + 1}): ${lastError}`);
        if (!running) throw error;
        await new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** attempt)));
      }
    }
  }

  async function begin(): Promise<void> {
    standby = false;
    await recover(await readCheckpoint());
    position = BigInt((await readCheckpoint()).position);
    running = true;
    subscription = store.subscribeToAll(
      async (event) => {
        buffer.push(event);
        if (buffer.length >= batchSize) return flush();
        if (!flushScheduled) {
          flushScheduled = true;
          setTimeout(() => void flush().catch(() => undefined), maxWaitMs);
        }
      },
      {
        after: position < 0n ? 'start' : position,
        filter: projection.filter,
        onError: (e) => (lastError = e instanceof Error ? e.message : String(e)),
        onCaughtUp: () => {
          lastError = undefined;
          void flush().then(markCaughtUp, () => undefined);
        },
      },
    );
  }

  const flush = (): Promise<void> =>
    (flushing = flushing.then(async () => {
      flushScheduled = false;
      if (buffer.length === 0) return;
      const batch = buffer;
      buffer = [];
      await applyBatch(batch);
    }));

  return {
    name: `clickhouse:${projection.name}`,
    async start() {
      for (const statement of projection.ddl(ch.database)) await ch.client.command({ query: statement });
      stopping = false;
      // Another process may own this projection: stand by, trying again, until it lets go.
      standbyLoop = (async () => {
        while (!stopping) {
          const client = await pool.connect();
          client.on('error', (e) => (lastError = e.message)); // a dropped session also drops the lock
          const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [id]);
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
      void standbyLoop.then(() => (lockClient && !stopping ? begin() : undefined)).catch((e: unknown) => {
        lastError = e instanceof Error ? e.message : String(e);
      });
    },
    async stop() {
      stopping = true;
      running = false;
      await standbyLoop;
      await subscription?.stop();
      await flush().catch(() => undefined);
      if (lockClient) {
        await lockClient.query('SELECT pg_advisory_unlock(hashtext($1))', [id]).catch(() => undefined);
        lockClient.release();
        lockClient = undefined;
      }
      for (const w of waiters) w.resolve(false);
      waiters = [];
    },
    waitFor(target, timeoutMs = 5000) {
      if (target <= position) return Promise.resolve(true);
      return new Promise((resolve) => {
        const entry = { position: target, resolve };
        waiters.push(entry);
        setTimeout(() => {
          waiters = waiters.filter((w) => w !== entry);
          resolve(false);
        }, timeoutMs).unref();
      });
    },
    status: () => ({ name: `clickhouse:${projection.name}`, running, standby, position, ...(lastError ? { lastError } : {}) }),
    caughtUp: () => caughtUp,
  };
}
