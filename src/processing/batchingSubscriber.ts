import type { RecordedEvent } from '../core/event.ts';
import type { AllFilter, EventStore, Subscription } from '../eventStore/eventStore.ts';
import { errorText } from './parkedEvents.ts';
import { applyOrPark, ReadModelBehind } from './poisonEvents.ts';

/** tries of a failing batch, then of the event that fails alone, before that event is parked */
export const PARK_AFTER_ATTEMPTS = 3;

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
 * to `apply` — retried with backoff while the stores fail; when its events do, split until the one
 * event that fails alone is found, which is parked (`park`) — and tell waiters when a position has
 * been applied.
 */
export function createBatchingSubscriber(options: {
  store: EventStore;
  filter: AllFilter;
  batchSize: number;
  /** 0: flush as soon as the subscription has handed over what it had in hand */
  maxWaitMs: number;
  /** applies a batch and returns the position the read model is now at */
  apply: (batch: RecordedEvent[]) => Promise<bigint>;
  /**
   * sets aside an event that failed alone `attempts` times, moves the read model past it and
   * returns its position now; without it a failing batch is retried until it succeeds
   */
  park?: (event: RecordedEvent, error: unknown, attempts: number) => Promise<bigint>;
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

  /** applies a batch: retried while the stores fail, split and parked when its events do */
  const applyWithRetry = (batch: RecordedEvent[]): Promise<void> =>
    applyOrPark(batch, {
      apply: async (events) => {
        advance(await options.apply(events));
      },
      park: async (event, error, attempts) => {
        if (!options.park) throw error;
        advance(await options.park(event, error, attempts));
        const at = `position ${event.position} (${event.type}, stream ${event.streamName})`;
        options.log?.(
          `projection ${options.name}: parked the event at ${at} after ${attempts} attempts: ${errorText(error)}`,
        );
      },
      // without a way to park, a failing batch is retried until it succeeds (as before)
      attempts: options.park ? PARK_AFTER_ATTEMPTS : Number.POSITIVE_INFINITY,
      retryTransient: true,
      delay: (attempt) =>
        new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** (attempt - 1)))),
      stopping: () => !running,
      onFailure: ({ error, events, attempt, transient }) => {
        // Readiness fails on lastError: for the stores failing, not for an event about to be
        // parked (a few seconds of splitting; the read model serves throughout), nor for waiting
        // on another read model (which reports its own failures; a stuck wait is caught as stuck).
        if (transient && !(error instanceof ReadModelBehind)) lastError = errorText(error);
        const first = events[0]!;
        const last = events[events.length - 1]!;
        const what =
          events.length === 1
            ? `the event at position ${first.position} (${first.type}, stream ${first.streamName})`
            : `the batch of ${events.length} events at positions ${first.position}–${last.position}`;
        options.log?.(
          `projection ${options.name}: ${what} failed (attempt ${attempt}${transient ? '; the store, not the events: retried until it succeeds' : ''}): ${errorText(error)}`,
        );
      },
    });

  const advance = (applied: bigint) => {
    if (applied > position) position = applied;
    lastError = undefined;
    settleWaiters();
  };

  const flush = (): Promise<void> =>
    (flushing = flushing.then(async () => {
      flushScheduled = false;
      // at most batchSize at a time: a page of the subscription may hold more
      while (buffer.length > 0) {
        const batch =
          buffer.length <= options.batchSize ? buffer : buffer.slice(0, options.batchSize);
        buffer = batch === buffer ? [] : buffer.slice(batch.length);
        await applyWithRetry(batch);
      }
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
      subscription = options.store.subscribeToAllInBatches(
        async (events) => {
          for (const event of events) buffer.push(event);
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
