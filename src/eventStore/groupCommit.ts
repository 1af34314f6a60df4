import type { AppendResult, EventStore, StreamAppend } from './eventStore.ts';

export type GroupCommitter = Readonly<{
  /** resolves once these appends are durably in the log (possibly together with other callers') */
  append(batch: readonly StreamAppend[]): Promise<AppendResult[]>;
  /** waits for everything queued so far */
  drain(): Promise<void>;
  stats(): { commits: number; appends: number; events: number };
}>;

type Pending = {
  batch: readonly StreamAppend[];
  resolve: (r: AppendResult[]) => void;
  reject: (e: unknown) => void;
};

/**
 * Group commit: while one transaction is in flight, callers queue up; the next transaction takes
 * everything queued, so a busy server makes few, large commits and an idle one adds no delay.
 * If a combined commit fails, each caller's appends are retried alone, so one bad request cannot
 * fail the others.
 */
export function createGroupCommitter(
  store: EventStore,
  options: { maxEvents?: number; maxInFlight?: number } = {},
): GroupCommitter {
  const maxEvents = options.maxEvents ?? 10_000;
  // A second transaction waits on the log's append lock inside Postgres while the first commits,
  // so it starts writing the moment the first one's fsync is done.
  const maxInFlight = options.maxInFlight ?? 2;
  const queue: Pending[] = [];
  const inFlight = new Set<Promise<void>>();
  const stats = { commits: 0, appends: 0, events: 0 };

  const countEvents = (b: readonly StreamAppend[]) => b.reduce((n, s) => n + s.events.length, 0);

  async function commit(group: Pending[]): Promise<void> {
    try {
      const results = await store.appendMany(group.flatMap((p) => p.batch));
      stats.commits++;
      let at = 0;
      for (const p of group) {
        p.resolve(results.slice(at, at + p.batch.length));
        at += p.batch.length;
      }
    } catch (error) {
      if (group.length === 1) return group[0]!.reject(error);
      for (const p of group) {
        await store.appendMany(p.batch).then(p.resolve, p.reject);
        stats.commits++;
      }
    }
  }

  function pump(): void {
    if (inFlight.size >= maxInFlight || queue.length === 0) return;
    const group: Pending[] = [];
    let events = 0;
    while (
      queue.length > 0 &&
      (group.length === 0 || events + countEvents(queue[0]!.batch) <= maxEvents)
    ) {
      const next = queue.shift()!;
      events += countEvents(next.batch);
      group.push(next);
    }
    const running: Promise<void> = commit(group).finally(() => {
      inFlight.delete(running);
      pump();
    });
    inFlight.add(running);
  }

  return {
    append(batch) {
      if (batch.length === 0) return Promise.resolve([]);
      stats.appends++;
      stats.events += countEvents(batch);
      return new Promise((resolve, reject) => {
        queue.push({ batch, resolve, reject });
        pump();
      });
    },
    async drain() {
      while (inFlight.size > 0 || queue.length > 0) await Promise.all([...inFlight]);
    },
    stats: () => ({ ...stats }),
  };
}
