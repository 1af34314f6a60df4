import type pg from 'pg';
import type { RecordedEvent } from '../core/event.ts';
import type { EventStore, Subscription } from '../eventStore/eventStore.ts';
import { withTransaction } from '../db/postgres.ts';
import { checkpointId, lockCheckpoint, readCheckpoint, storeCheckpoint, type PgProjection } from './projection.ts';

export type ProjectionStatus = Readonly<{
  name: string;
  running: boolean;
  /** another process owns this projection; this one takes over when it stops */
  standby?: boolean;
  position: bigint;
  lastError?: string;
}>;

export type ProjectionRunner = Readonly<{
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** resolves true once the read model has applied `position` (or a later one); false on timeout */
  waitFor(position: bigint, timeoutMs?: number): Promise<boolean>;
  status(): ProjectionStatus;
  /** resolves once the runner has applied everything that was in the log when it started */
  caughtUp(): Promise<void>;
}>;

export type RunnerOptions = Readonly<{ batchSize?: number; maxWaitMs?: number; log?: (msg: string) => void }>;

/**
 * Subscribes to the log from the stored checkpoint and applies events in batches; each batch and
 * its checkpoint commit in one transaction, so a crash mid-batch rolls both back and the batch is
 * simply applied again on restart. The checkpoint row lock also serialises several processes
 * (server and CLI) projecting the same read model: events at or below the stored checkpoint were
 * applied by someone else and are skipped.
 */
export function createProjectionRunner(
  store: EventStore,
  pool: pg.Pool,
  projection: PgProjection,
  options: RunnerOptions = {},
): ProjectionRunner {
  const id = checkpointId(projection);
  const batchSize = options.batchSize ?? 500;
  let buffer: RecordedEvent[] = [];
  let position = -1n;
  let running = false;
  let lastError: string | undefined;
  let subscription: Subscription | undefined;
  let flushing: Promise<void> = Promise.resolve();
  let flushScheduled = false;
  let waiters: Array<{ position: bigint; resolve: (ok: boolean) => void }> = [];
  let markCaughtUp: () => void = () => undefined;
  let caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));

  const settleWaiters = () => {
    const pending: typeof waiters = [];
    for (const w of waiters) (w.position <= position ? w.resolve(true) : pending.push(w));
    waiters = pending;
  };

  async function applyBatch(batch: RecordedEvent[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const applied = await withTransaction(pool, async (tx) => {
          const stored = await lockCheckpoint(tx, id);
          const fresh = batch.filter((e) => e.position > stored);
          const last = batch[batch.length - 1]!.position;
          if (fresh.length > 0) await projection.handle(fresh, tx);
          const next = last > stored ? last : stored;
          if (next !== stored) await storeCheckpoint(tx, id, next);
          return next;
        });
        position = applied;
        lastError = undefined;
        settleWaiters();
        return;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
        options.log?.(`projection ${id}: batch failed (attempt ${attempt + 1}): ${lastError}`);
        if (!running) throw error;
        await new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** attempt)));
      }
    }
  }

  function flush(): Promise<void> {
    flushing = flushing.then(async () => {
      flushScheduled = false;
      if (buffer.length === 0) return;
      const batch = buffer;
      buffer = [];
      await applyBatch(batch);
    });
    return flushing;
  }

  return {
    name: projection.name,
    async start() {
      caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));
      await withTransaction(pool, async (tx) => void (await lockCheckpoint(tx, id)));
      position = await readCheckpoint(pool, id);
      running = true;
      subscription = store.subscribeToAll(
        async (event) => {
          buffer.push(event);
          if (buffer.length >= batchSize) return flush();
          if (!flushScheduled) {
            flushScheduled = true;
            // Runs once the subscription has handed over the events it already had in hand.
            setImmediate(() => void flush().catch(() => undefined));
          }
        },
        {
          after: position < 0n ? 'start' : position,
          filter: projection.filter,
          // A read error is retried by the subscription; it is reported until the next batch succeeds
          // or the next idle poll shows the log readable again.
          onError: (e) => (lastError = e instanceof Error ? e.message : String(e)),
          onCaughtUp: () => {
            lastError = undefined;
            void flush().then(markCaughtUp, () => undefined);
          },
        },
      );
    },
    async stop() {
      running = false;
      await subscription?.stop();
      await flush().catch(() => undefined);
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
    status: () => ({ name: projection.name, running, position, ...(lastError ? { lastError } : {}) }),
    caughtUp: () => caughtUp,
  };
}
