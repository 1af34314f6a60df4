import type pg from 'pg';
import { withTransaction } from '../db/postgres.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import { createBatchingSubscriber } from './batchingSubscriber.ts';
import { recordParked } from './parkedEvents.ts';
import {
  checkpointId,
  lockCheckpoint,
  type PgProjection,
  readCheckpoint,
  storeCheckpoint,
} from './projection.ts';

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

export type RunnerOptions = Readonly<{
  batchSize?: number;
  maxWaitMs?: number;
  log?: (msg: string) => void;
}>;

/**
 * Subscribes to the log from the stored checkpoint and applies events in batches; each batch and
 * its checkpoint commit in one transaction, so a crash mid-batch rolls both back and the batch is
 * simply applied again on restart. The checkpoint row lock also serialises several processes
 * (server and CLI) projecting the same read model: events at or below the stored checkpoint were
 * applied by someone else and are skipped. An event the read model cannot apply is parked
 * (`parkedEvents.ts`) and the runner goes on.
 */
export function createProjectionRunner(
  store: EventStore,
  pool: pg.Pool,
  projection: PgProjection,
  options: RunnerOptions = {},
): ProjectionRunner {
  const id = checkpointId(projection);
  const loop = createBatchingSubscriber({
    store,
    filter: projection.filter,
    batchSize: options.batchSize ?? projection.batchSize ?? 500,
    maxWaitMs: options.maxWaitMs ?? projection.maxWaitMs ?? 0,
    log: options.log,
    name: id,
    apply: (batch) =>
      withTransaction(pool, async (tx) => {
        const stored = await lockCheckpoint(tx, id);
        const fresh = batch.filter((e) => e.position > stored);
        const last = batch[batch.length - 1]!.position;
        if (fresh.length > 0) await projection.handle(fresh, tx);
        const next = last > stored ? last : stored;
        if (next !== stored) await storeCheckpoint(tx, id, next);
        return next;
      }),
    // The parked row and the checkpoint past the event commit together.
    park: (event, error, attempts) =>
      withTransaction(pool, async (tx) => {
        const stored = await lockCheckpoint(tx, id);
        if (event.position <= stored) return stored;
        await recordParked(tx, projection.name, event, error, attempts);
        await storeCheckpoint(tx, id, event.position);
        return event.position;
      }),
  });

  return {
    name: projection.name,
    async start() {
      await withTransaction(pool, async (tx) => void (await lockCheckpoint(tx, id)));
      loop.start(await readCheckpoint(pool, id));
    },
    stop: () => loop.stop(),
    waitFor: (target, timeoutMs) => loop.waitFor(target, timeoutMs),
    status: () => {
      const lastError = loop.lastError();
      return {
        name: projection.name,
        running: loop.running(),
        position: loop.position(),
        ...(lastError ? { lastError } : {}),
      };
    },
    caughtUp: () => loop.caughtUp(),
  };
}
