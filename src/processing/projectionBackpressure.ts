import { cachedFor } from '../core/cachedFor.ts';
import type { ProjectionRunner } from './projectionRunner.ts';

export type BackpressureLimits = Readonly<{
  /** log positions the slowest watched read model may be behind before capture waits */
  maxBacklog: number;
  /** longest a capture request waits for it; then it appends anyway (0: never waits) */
  maxWaitMs: number;
}>;

const POLL_MS = 10;

/**
 * What a capture request awaits before it appends: while the read models this process feeds in
 * memory (`names`) are more than `maxBacklog` positions behind the log's head, it waits — at most
 * `maxWaitMs`, then it appends anyway, so an acknowledgement is late, never refused. Under an
 * overload the HTTP work would otherwise take the whole thread and leave the read models behind
 * without bound (issue #27's sustained run: ClickHouse lag p99 20–28 s, a growing backlog); past
 * the live tail's window (20,000 events) they also read the log back from Postgres. A read model
 * that is stopped, standing by or failing on its stores is not waited for: capture never depends
 * on it being healthy.
 */
export function projectionBackpressure(
  runners: ReadonlyMap<string, ProjectionRunner>,
  names: readonly string[],
  headPosition: () => Promise<bigint>,
  limits: BackpressureLimits,
): () => Promise<void> {
  const head = cachedFor(POLL_MS, headPosition);
  const behind = async (): Promise<number> => {
    let slowest: bigint | undefined;
    for (const name of names) {
      const s = runners.get(name)?.status();
      if (!s?.running || s.standby || s.lastError !== undefined) continue;
      if (slowest === undefined || s.position < slowest) slowest = s.position;
    }
    return slowest === undefined ? 0 : Number((await head()) - slowest);
  };
  return async () => {
    if (limits.maxWaitMs <= 0) return;
    const until = Date.now() + limits.maxWaitMs;
    while ((await behind()) > limits.maxBacklog && Date.now() < until)
      await new Promise((r) => setTimeout(r, POLL_MS));
  };
}
