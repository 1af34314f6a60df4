import type { RecordedEvent } from '../core/event.ts';
import type { AllFilter, EventStore, Subscription } from '../eventStore/eventStore.ts';

export type BatchingSubscriber = Readonly<{
  start(after: bigint): void;
  stop(): Promise<void>;
  position(): bigint;
  running(): boolean;
  lastError(): string | undefined;
  waitFor(position: bigint, timeoutMs?: number): Promise<boolean>;
  caughtUp(): Promise<void>;
}>;

/**
 * What both runners (Postgres and ClickHouse read models) share: subscribe from a position, gather
 * events into batches (up to `batchSize`, or whatever arrived within `maxWaitMs`), hand each batch
 * to `apply` — retried with backoff until it succeeds, never skipped — and tell waiters when a
 * position has been applied.
 */
export function createBatchingSubscriber(options: {
  store: EventStore;
  filter: AllFilter;
  batchSize: number;
  /** 0: flush as soon as the subscription has handed over what it had in hand */
  maxWaitMs: number;
  /** applies a batch and returns the position the read model is now at */
  apply: (batch: RecordedEvent[]) => Promise<bigint>;
  log?: ((msg: string) => void) | undefined;
  name: string;
}): BatchingSubscriber {
  let buffer: RecordedEvent[] = [];
  let position = -1n;
  let running = false;
  let lastError: string | undefined;
  let subscription: Subscription | undefined;
  let flushing: Promise<void> = Promise.resolve();
  let flushScheduled = false;
  let waiters: Array<{ position: bigint; resolve: (ok: boolean) => void }> = [];
  let markCaughtUp: () => void = () => undefined;
  let caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));

  const settleWaiters = () => {
    const pending: typeof waiters = [];
    for (const w of waiters) w.position <= position ? w.resolve(true) : pending.push(w);
    waiters = pending;
  };

  async function applyWithRetry(batch: RecordedEvent[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const applied = await options.apply(batch);
        if (applied > position) position = applied;
        lastError = undefined;
        settleWaiters();
        return;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
        options.log?.(
          `projection ${options.name}: batch failed (attempt ${attempt + 1}): ${lastError}`,
        );
        if (!running) throw error;
        await new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** attempt)));
      }
    }
  }

  const flush = (): Promise<void> =>
    (flushing = flushing.then(async () => {
      flushScheduled = false;
      if (buffer.length === 0) return;
      const batch = buffer;
      buffer = [];
      await applyWithRetry(batch);
    }));

  const schedule = () => {
    if (flushScheduled) return;
    flushScheduled = true;
    const run = () => void flush().catch(() => undefined);
    if (options.maxWaitMs > 0) setTimeout(run, options.maxWaitMs);
    else setImmediate(run);
  };

  return {
    start(after) {
      caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));
      position = after;
      running = true;
      subscription = options.store.subscribeToAll(
        async (event) => {
          buffer.push(event);
          if (buffer.length >= options.batchSize) return flush();
          schedule();
        },
        {
          after: after < 0n ? 'start' : after,
          filter: options.filter,
          // A read error is retried by the subscription; it is reported until a batch succeeds or
          // the subscription reports being caught up again.
          onError: (e) => (lastError = e instanceof Error ? e.message : String(e)),
          onCaughtUp: () => {
            lastError = undefined;
            void flush().then(markCaughtUp, () => undefined);
          },
        },
      );
    },
    async stop() {
      running = false;
      await subscription?.stop();
      await flush().catch(() => undefined);
      for (const w of waiters) w.resolve(false);
      waiters = [];
    },
    position: () => position,
    running: () => running,
    lastError: () => lastError,
    waitFor(target, timeoutMs = 5000) {
      if (target <= position) return Promise.resolve(true);
      return new Promise((resolve) => {
        const entry = { position: target, resolve };
        waiters.push(entry);
        setTimeout(() => {
          waiters = waiters.filter((w) => w !== entry);
          resolve(false);
        }, timeoutMs).unref();
      });
    },
    caughtUp: () => caughtUp,
  };
}
