import type { EventStore } from '../eventStore/eventStore.ts';
import type { EventFilter } from './projection.ts';

/** Pending events are counted up to this many (one read of the log), then reported as more. */
export const PENDING_CAP = 1_000;

export type Pending = Readonly<{
  /** events of the read model's kinds after its position, up to PENDING_CAP + 1 */
  events: number;
  /** more than PENDING_CAP are pending */
  capped: boolean;
  /** age of the oldest of them, in seconds (one decimal); 0 when there are none */
  lagSeconds: number;
}>;

/**
 * What a read model still has to do: the events of its kinds after `position` (a checkpoint stays
 * put while the log grows with other kinds: it is not behind then), and how old the oldest is.
 * Shared by `status`, `GET /api/projections/` and the `/metrics` gauges, so they agree.
 */
export async function pendingFor(
  store: EventStore,
  filter: EventFilter,
  position: bigint,
  now: Date = new Date(),
): Promise<Pending> {
  const pending = await store.readAll({
    after: position < 0n ? 'start' : position,
    maxCount: PENDING_CAP + 1,
    filter,
  });
  const next = pending[0];
  return {
    events: pending.length,
    capped: pending.length > PENDING_CAP,
    lagSeconds: next
      ? Math.max(0, Math.round((now.getTime() - next.recordedAt.getTime()) / 100) / 10)
      : 0,
  };
}
