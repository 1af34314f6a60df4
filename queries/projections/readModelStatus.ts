import { chProjectionsFor, readModelEntries } from '../../projections/registry.ts';
import type { AppContext } from '../../src/appContext.ts';
import { type ParkedEvent, parkedEventsReader } from '../../src/processing/parkedEvents.ts';
import { PENDING_CAP, pendingFor } from '../../src/processing/pendingEvents.ts';
import { readCheckpoint } from '../../src/processing/projection.ts';

type ModelStatus = {
  name: string;
  position: string;
  /** events of its kinds it has not applied, counted up to PENDING_CAP (then `${cap}+`) */
  pending_events: string;
  lag_seconds: number;
  /** events it could not apply and set aside: it serves, degraded, until they are replayed or dropped */
  parked_events: number;
};

/** parked events listed in the status (the CLI's `parked list` shows them all) */
const PARKED_LISTED = 100;

export const parkedView = (p: ParkedEvent) => ({
  read_model: p.readModel,
  position: p.position.toString(),
  stream: p.stream,
  event_type: p.eventType,
  event_id: p.eventId,
  error: p.error,
  attempts: p.attempts,
  parked_at: p.parkedAt.toISOString(),
});

/**
 * `status` (CLI) and `GET /api/projections/`: for each read model its checkpoint, how many events of its kinds it has not applied
 * yet (a checkpoint stays put while the log grows with other kinds: it is not behind), how old
 * the oldest of them is (0 when caught up), and how many events it parked. Read from the
 * checkpoints, so it answers beside a running server, whose projections these are.
 */
export async function readModelStatus(ctx: AppContext, now = new Date()) {
  const head = await ctx.store.headPosition();
  const parkedEvents = parkedEventsReader(ctx.pool);
  const parkedCounts = await parkedEvents.counts();
  const readModels: ModelStatus[] = [];
  for (const m of readModelEntries(chProjectionsFor(ctx.pool))) {
    const position = await readCheckpoint(ctx.pool, m.checkpointId);
    const pending = await pendingFor(ctx.store, m.filter, position, now);
    readModels.push({
      name: m.name,
      position: position.toString(),
      pending_events: pending.capped ? `${PENDING_CAP}+` : String(pending.events),
      lag_seconds: pending.lagSeconds,
      parked_events: parkedCounts.get(m.name) ?? 0,
    });
  }
  const parked = (await parkedEvents.list({ limit: PARKED_LISTED })).map(parkedView);
  const width = Math.max(...readModels.map((r) => r.name.length));
  const text = [
    `log head: position ${head}`,
    ...readModels.map(
      (r) =>
        `${r.name.padEnd(width)}  position ${r.position}  pending ${r.pending_events} events, oldest ${r.lag_seconds} s` +
        (r.parked_events > 0 ? `  PARKED ${r.parked_events} (npm run cli -- parked list)` : ''),
    ),
  ].join('\n');
  return { json: { head: head.toString(), read_models: readModels, parked }, text };
}
