import type pg from 'pg';
import type { AllFilter, EventStore } from './eventStore/eventStore.ts';
import { type ReadModel, readModelName } from './processing/clickhouseProjection.ts';
import type { ProjectionRunner } from './processing/projectionRunner.ts';

/** What slices get from the composition root; nothing here knows about a particular feature. */
export type AppContext = Readonly<{
  store: EventStore;
  pool: pg.Pool;
  now: () => Date;
  /**
   * Read-your-writes: waits (bounded) until the read model has applied `position`.
   * Resolves false on timeout; the caller answers from the decided state anyway.
   */
  awaitProjection: (readModel: ReadModel, position: bigint | undefined) => Promise<boolean>;
}>;

export function createAwaitProjection(
  runners: ReadonlyMap<string, ProjectionRunner>,
  timeoutMs: number,
): AppContext['awaitProjection'] {
  return async (readModel, position) => {
    if (position === undefined) return true;
    const name = readModelName(readModel);
    const runner = runners.get(name);
    if (!runner) throw new Error(`no projection named ${name}`);
    return runner.waitFor(position, timeoutMs);
  };
}

/** Integer ids come from Postgres sequences outside every read model, so rebuilds never reuse them. */
export const idSequences = [
  'project',
  'user',
  'feature_flag',
  'role_access',
  'cohort',
  'dashboard',
  'annotation',
  'action',
  'insight',
  'dashboard_tile',
] as const;
export type IdSequence = (typeof idSequences)[number];

export const idSequencesSchema = idSequences
  .map((s) => `CREATE SEQUENCE IF NOT EXISTS public.${s}_id_seq;`)
  .join('\n');

export async function nextId(pool: pg.Pool, sequence: IdSequence): Promise<number> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT nextval('public.${sequence}_id_seq') AS id`,
  );
  return Number(rows[0]!.id);
}

/**
 * Read-your-writes for queries: waits (bounded) until each named read model has applied the newest
 * event of the log that `filter` selects, so whatever was appended before the request is visible.
 */
export async function awaitNewest(
  ctx: Pick<AppContext, 'store' | 'awaitProjection'>,
  filter: AllFilter,
  ...readModels: ReadModel[]
): Promise<boolean> {
  const [newest] = await ctx.store.readAll({
    direction: 'backwards',
    before: 'end',
    maxCount: 1,
    filter,
  });
  const applied = await Promise.all(
    readModels.map((p) => ctx.awaitProjection(p, newest?.position)),
  );
  return applied.every(Boolean);
}
