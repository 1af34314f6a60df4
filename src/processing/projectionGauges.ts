import type pg from 'pg';
import { cachedFor } from '../core/cachedFor.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { Metrics } from '../http/metrics.ts';
import { parkedEventsReader } from './parkedEvents.ts';
import { PENDING_CAP, pendingFor } from './pendingEvents.ts';
import type { EventFilter } from './projection.ts';
import type { ProjectionRunner } from './projectionRunner.ts';

/**
 * The projections' gauges, read at each scrape: position, what each still has to do (pending
 * events of its kinds and their age, as `status` counts them), parked events, the log head.
 */
export function registerProjectionGauges(
  metrics: Metrics,
  runners: ReadonlyMap<string, ProjectionRunner>,
  filters: ReadonlyMap<string, EventFilter>,
  store: EventStore,
  pool: pg.Pool,
): void {
  const head = cachedFor(250, () => store.headPosition());
  // one read of the log per read model per scrape, shared by the two gauges that need it
  const pending = cachedFor(250, async () => {
    const now = new Date();
    const out = new Map<string, Awaited<ReturnType<typeof pendingFor>>>();
    for (const r of runners.values()) {
      const filter = filters.get(r.name);
      if (r.status().standby) continue; // another process projects it
      if (filter) out.set(r.name, await pendingFor(store, filter, r.status().position, now));
    }
    return out;
  });
  const parked = cachedFor(250, () => parkedEventsReader(pool).counts());
  metrics.gauge(
    'hogstream_projection_position',
    'Last log position each read model has applied',
    ['projection'],
    async (set) => {
      for (const r of runners.values()) set({ projection: r.name }, Number(r.status().position));
    },
  );
  metrics.gauge(
    'hogstream_projection_pending_events',
    `Events of the kinds each read model reads that it has not applied yet (0: caught up; counted up to ${PENDING_CAP + 1})`,
    ['projection'],
    async (set) => {
      for (const [name, p] of await pending()) set({ projection: name }, p.events);
    },
  );
  metrics.gauge(
    'hogstream_projection_lag_seconds',
    'Age of the oldest event each read model has not applied yet (0: caught up)',
    ['projection'],
    async (set) => {
      for (const [name, p] of await pending()) set({ projection: name }, p.lagSeconds);
    },
  );
  metrics.gauge(
    'hogstream_projection_parked_events',
    'Events each read model could not apply and parked (see `npm run cli -- parked list`)',
    ['projection'],
    async (set) => {
      const counts = await parked();
      for (const r of runners.values()) set({ projection: r.name }, counts.get(r.name) ?? 0);
    },
  );
  metrics.gauge(
    'hogstream_log_head_position',
    'Newest position in the event log',
    [],
    async (set) => set({}, Number(await head())),
  );
}
