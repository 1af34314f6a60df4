import type pg from 'pg';
import { withTransaction } from '../db/postgres.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import { checkpointId, lockCheckpoint, type PgProjection } from './projection.ts';
import {
  createProjectionRunner,
  type ProjectionRunner,
  type RunnerOptions,
} from './projectionRunner.ts';

/** how often the read model's own checkpoint is brought up to its slowest partition's */
const PUBLISH_EVERY_MS = 20;

/** The runner of a Postgres read model: one, or one per partition when it has `partitions`. */
export function createReadModelRunner(
  store: EventStore,
  pool: pg.Pool,
  projection: PgProjection,
  options: RunnerOptions = {},
): ProjectionRunner {
  const partitions = projection.partitions ?? [];
  if (partitions.length === 0) return createProjectionRunner(store, pool, projection, options);
  return createPartitionedRunner(store, pool, projection, partitions, options);
}

/**
 * A read model built by several runners at once (the persons read model with
 * INGESTION_WORKERS > 1, docs/SCALING.md), seen as one: each partition's runner reads the whole
 * log, folds its own share and keeps its own checkpoint, so the read model has applied a position
 * once every partition has. That lowest position is kept in the read model's own checkpoint row
 * (`persons@<version>`), which readers in other processes and `status` read as before; it is
 * written after the partitions' commits, so it is never ahead of them (at worst a moment behind).
 */
function createPartitionedRunner(
  store: EventStore,
  pool: pg.Pool,
  projection: PgProjection,
  partitions: readonly PgProjection[],
  options: RunnerOptions,
): ProjectionRunner {
  const id = checkpointId(projection);
  const ids = partitions.map(checkpointId);
  const runners = partitions.map((p) => createProjectionRunner(store, pool, p, options));
  const lowest = () => runners.map((r) => r.status().position).reduce((a, b) => (b < a ? b : a));
  let timer: NodeJS.Timeout | undefined;
  let published = -2n;
  let publishing = false;
  const publish = async () => {
    const at = lowest();
    if (publishing || at <= published) return;
    publishing = true;
    try {
      // the partitions' rows, not `at`: another process may run some of them
      await pool.query(
        `UPDATE public.projection_checkpoints SET updated_at = now(), position = greatest(position,
           (SELECT min(position) FROM public.projection_checkpoints WHERE id = ANY($2::text[])))
         WHERE id = $1`,
        [id, ids],
      );
      published = at;
    } catch (error) {
      options.log?.(
        `projection ${projection.name}: its checkpoint not brought up: ${String(error)}`,
      );
    } finally {
      publishing = false;
    }
  };
  return {
    name: projection.name,
    async start() {
      await withTransaction(pool, async (tx) => {
        await lockCheckpoint(tx, id);
        for (const partition of ids) await lockCheckpoint(tx, partition);
      });
      for (const r of runners) await r.start();
      timer = setInterval(() => void publish(), PUBLISH_EVERY_MS);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await Promise.all(runners.map((r) => r.stop()));
      await publish();
    },
    waitFor: async (target, timeoutMs) =>
      (await Promise.all(runners.map((r) => r.waitFor(target, timeoutMs)))).every(Boolean),
    status() {
      const all = runners.map((r) => r.status());
      const failing = all.findIndex((s) => s.lastError);
      return {
        name: projection.name,
        running: all.every((s) => s.running),
        position: lowest(),
        ...(failing >= 0 ? { lastError: `partition ${failing}: ${all[failing]!.lastError}` } : {}),
      };
    },
    caughtUp: async () => {
      await Promise.all(runners.map((r) => r.caughtUp()));
      await publish();
    },
  };
}
