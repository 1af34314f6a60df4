import { chProjectionsFor, readModelEntries } from '../../projections/registry.ts';
import type { AppContext } from '../../src/appContext.ts';
import { readCheckpoint } from '../../src/processing/projection.ts';

type ModelStatus = {
  name: string;
  position: string;
  /** events of its kinds it has not applied, counted up to PENDING_CAP (then `${cap}+`) */
  pending_events: string;
  lag_seconds: number;
};

const PENDING_CAP = 1_000;

/**
 * `status` (CLI) and `GET /api/projections/`: for each read model its checkpoint, how many events of its kinds it has not applied
 * yet (a checkpoint stays put while the log grows with other kinds: it is not behind), and how old
 * the oldest of them is (0 when caught up). Read from the checkpoints, so it answers beside a
 * running server, whose projections these are.
 */
export async function readModelStatus(ctx: AppContext, now = new Date()) {
  const head = await ctx.store.headPosition();
  const readModels: ModelStatus[] = [];
  for (const m of readModelEntries(chProjectionsFor(ctx.pool))) {
    const position = await readCheckpoint(ctx.pool, m.checkpointId);
    // the oldest event of this read model's kinds that it has not applied
    const pending = await ctx.store.readAll({
      after: position < 0n ? 'start' : position,
      maxCount: PENDING_CAP + 1,
      filter: m.filter,
    });
    const next = pending[0];
    readModels.push({
      name: m.name,
      position: position.toString(),
      pending_events: pending.length > PENDING_CAP ? `${PENDING_CAP}+` : String(pending.length),
      lag_seconds: next
        ? Math.max(0, Math.round((now.getTime() - next.recordedAt.getTime()) / 100) / 10)
        : 0,
    });
  }
  const width = Math.max(...readModels.map((r) => r.name.length));
  const text = [
    `log head: position ${head}`,
    ...readModels.map(
      (r) =>
        `${r.name.padEnd(width)}  position ${r.position}  pending ${r.pending_events} events, oldest ${r.lag_seconds} s`,
    ),
  ].join('\n');
  return { json: { head: head.toString(), read_models: readModels }, text };
}
