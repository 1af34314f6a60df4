import type { EventStore } from '../eventStore/eventStore.ts';
import type { EventFilter } from './projection.ts';

/**
 * Tells readiness which projections are stuck: running, no error, yet their position has not moved
 * for `thresholdMs` while an event of their kinds older than that waits (a batch blocked on a lock,
 * a hung query). Only a projection whose position stood still that long costs a read of the log.
 */
export function stuckProjections(
  store: EventStore,
  filters: ReadonlyMap<string, EventFilter>,
  thresholdMs: number,
  now: () => number = Date.now,
) {
  const seen = new Map<string, { position: bigint; since: number }>();
  return async (name: string, position: bigint): Promise<string | undefined> => {
    const t = now();
    const last = seen.get(name);
    if (!last || last.position !== position) {
      seen.set(name, { position, since: t });
      return undefined;
    }
    if (t - last.since < thresholdMs) return undefined;
    const filter = filters.get(name);
    const [next] = await store.readAll({
      after: position < 0n ? 'start' : position,
      maxCount: 1,
      ...(filter ? { filter } : {}),
    });
    if (!next || t - next.recordedAt.getTime() < thresholdMs) return undefined;
    return `projection ${name}: stuck at position ${position} for ${Math.round((t - last.since) / 1000)} s with events waiting`;
  };
}
