import { cachedFor } from '../core/cachedFor.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { Metrics } from '../http/metrics.ts';
import type { ProjectionRunner } from './projectionRunner.ts';

/** The projections' gauges, read at each scrape: position, distance to the log head, the head. */
export function registerProjectionGauges(
  metrics: Metrics,
  runners: ReadonlyMap<string, ProjectionRunner>,
  store: EventStore,
): void {
  // one read of the head per scrape, shared by the two gauges that need it
  const head = cachedFor(250, () => store.headPosition());
  metrics.gauge(
    'hogstream_projection_position',
    'Last log position each read model has applied',
    ['projection'],
    async (set) => {
      for (const r of runners.values()) set({ projection: r.name }, Number(r.status().position));
    },
  );
  metrics.gauge(
    'hogstream_projection_lag_positions',
    'Log positions between the head and what each read model has applied (0: caught up)',
    ['projection'],
    async (set) => {
      const at = await head();
      for (const r of runners.values()) {
        const behind = at - r.status().position;
        set({ projection: r.name }, Number(behind > 0n ? behind : 0n));
      }
    },
  );
  metrics.gauge(
    'hogstream_log_head_position',
    'Newest position in the event log',
    [],
    async (set) => set({}, Number(await head())),
  );
}
