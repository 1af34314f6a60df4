import { cachedFor } from '../core/cachedFor.ts';
import type { ProjectionRunner } from './projectionRunner.ts';

export type BackpressureLimits = Readonly<{
  /** log positions the slowest watched read model may be behind before capture waits */
  maxBacklog: number;
  /** longest a capture request waits for it; then it goes on anyway (0: never waits) */
  maxWaitMs: number;
}>;

const POLL_MS = 10;

/** Told, once the request is done, how many events it appended (0 when it appended none). */
export type Admitted = (appendedEvents: number) => void;

/**
 * What a capture request awaits before it decodes its body (and calls back once it appended):
 * while the read models this process feeds in memory (`names`) are more than `maxBacklog`
 * positions behind the log's head — counting the requests already let go — it waits, at most
 * `maxWaitMs`, then it goes on anyway, so an acknowledgement is late, never refused. Under
 * an overload the HTTP work would otherwise take the whole thread and leave the read models behind
 * without bound (issue #27's sustained run: ClickHouse lag p99 13–34 s, a growing backlog); past
 * the live tail's window (20,000 events) they also read the log back from Postgres. A read model
 * that is stopped, standing by or failing on its stores is not waited for, and a failing look at
 * the log's head lets requests go: capture never depends on a read model being healthy.
 *
 * Requests wait in arrival order behind one poller (one look at the head every `POLL_MS`, however
 * many wait), and they wait as raw bodies, before decoding: decoded events held across a wait
 * outlive young-generation collections and cost more to collect than to produce (issue #27,
 * fourth part).
 */
export function projectionBackpressure(
  runners: ReadonlyMap<string, ProjectionRunner>,
  names: readonly string[],
  headPosition: () => Promise<bigint>,
  limits: BackpressureLimits,
): () => Promise<Admitted> {
  const head = cachedFor(POLL_MS, headPosition);
  /** positions the slowest watched read model is behind the head; 0 when none is to be waited for */
  const behind = async (): Promise<number> => {
    let slowest: bigint | undefined;
    for (const name of names) {
      const s = runners.get(name)?.status();
      if (!s?.running || s.standby || s.lastError !== undefined) continue;
      if (slowest === undefined || s.position < slowest) slowest = s.position;
    }
    if (slowest === undefined) return 0;
    try {
      return Number((await head()) - slowest);
    } catch {
      return 0; // the append reports the outage (503)
    }
  };

  // Requests let go but not yet appended count against the backlog at the recent average of
  // events a request: letting every waiting request go at once overshot the bound by all of them
  // (50 connections of 100 events: a backlog of 10,000 for a bound of 5,000).
  // Before any request is done, one is taken to hold 100 events (a full SDK batch), so a first
  // burst of requests does not overshoot either; then the average of the last ≈ 16.
  let inFlight = 0;
  let eventsPerRequest = 100;
  const done: Admitted = (appended) => {
    inFlight--;
    eventsPerRequest += (appended - eventsPerRequest) / 16;
  };
  const mayGo = (lag: number) =>
    lag <= limits.maxBacklog &&
    (inFlight === 0 || lag + (inFlight + 1) * eventsPerRequest <= limits.maxBacklog);
  const go = () => {
    inFlight++;
    return done;
  };

  const waiting: { until: number; go: (admitted: Admitted) => void }[] = [];
  let polling = false;
  const poll = async () => {
    polling = true;
    while (waiting.length > 0) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      const lag = await behind();
      const now = Date.now();
      while (waiting.length > 0 && (mayGo(lag) || waiting[0]!.until <= now))
        waiting.shift()!.go(go());
    }
    polling = false;
  };

  const unbounded: Admitted = () => {};
  return async () => {
    if (limits.maxWaitMs <= 0) return unbounded;
    if (waiting.length === 0 && mayGo(await behind())) return go();
    return new Promise<Admitted>((resolve) => {
      waiting.push({ until: Date.now() + limits.maxWaitMs, go: resolve });
      if (!polling) void poll();
    });
  };
}
