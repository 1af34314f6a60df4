import type pg from 'pg';
import type { EventStore } from '../eventStore/eventStore.ts';
import { checkpointId, type PgProjection } from './projection.ts';
import type { ProjectionRunner } from './projectionRunner.ts';
import { rebuildProjection } from './rebuildProjection.ts';

/**
 * The projections whose read model was built by another version of them: a checkpoint
 * `<name>@<other version>` and none for this one. Their tables hold what the old code wrote, so
 * the new code must not apply events to them from position 0 (it would fold everything twice
 * into old-shaped tables): they are rebuilt blue/green instead, and their DDL is not run against
 * the live tables.
 */
export async function outdatedProjections(
  db: pg.Pool | pg.PoolClient,
  projections: readonly PgProjection[],
): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM public.projection_checkpoints');
  const ids = new Set(rows.map((r) => r.id));
  const versioned = [...ids].map((id) => id.slice(0, id.lastIndexOf('@')));
  return new Set(
    projections
      .filter((p) => !ids.has(checkpointId(p)) && versioned.includes(p.name))
      .map((p) => p.name),
  );
}

/**
 * Upgrades the outdated read models one after the other: each is replayed into shadow tables
 * with its new DDL and handler while the old tables keep answering queries, swapped in, and its
 * runner started. `signal` stops it between pages (on shutdown; the next start begins again).
 */
export async function upgradeReadModels(
  store: EventStore,
  pool: pg.Pool,
  outdated: readonly PgProjection[],
  runners: ReadonlyMap<string, ProjectionRunner>,
  log: (message: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  for (const projection of outdated) {
    log(
      `read model ${projection.name}: built by another version, rebuilding it as version ${projection.version} (blue/green)`,
    );
    const started = performance.now();
    const r = await rebuildProjection(store, pool, projection, {
      log,
      ...(signal ? { signal } : {}),
    });
    log(
      `read model ${projection.name}: version ${projection.version} in place (${r.events} events, ${Math.round(performance.now() - started)} ms${r.parked ? `, ${r.parked} parked` : ''})`,
    );
    await runners.get(projection.name)?.start();
  }
}

/**
 * Starts the runners, except those of outdated read models, which are upgraded first: `access`
 * awaited (the bootstrap reads it), the others in the background while the server answers.
 */
export async function startRunners(
  stores: Readonly<{ store: EventStore; pool: pg.Pool; outdated: ReadonlySet<string> }>,
  projections: readonly PgProjection[],
  runners: ReadonlyMap<string, ProjectionRunner>,
  log: Readonly<{ info: (message: string) => void; error: (message: string) => void }>,
): Promise<{ stop(): Promise<void> }> {
  for (const runner of runners.values())
    if (!stores.outdated.has(runner.name)) await runner.start();
  const outdated = projections.filter((p) => stores.outdated.has(p.name));
  const abort = new AbortController();
  const upgrade = (models: readonly PgProjection[]) =>
    upgradeReadModels(stores.store, stores.pool, models, runners, log.info, abort.signal);
  await upgrade(outdated.filter((p) => p.name === 'access'));
  const rest = upgrade(outdated.filter((p) => p.name !== 'access')).catch((error: unknown) => {
    if (!abort.signal.aborted) log.error(`read model upgrade failed: ${String(error)}`);
  });
  return {
    async stop() {
      abort.abort();
      await rest;
    },
  };
}
