import PQueue from 'p-queue';
import { ServiceUnavailable } from '../../src/core/errors.ts';

/**
 * How many synchronous `/query` runs the server takes at once (docs/RELIABILITY.md "Request
 * limits"): at most `maxRunning` run, at most `maxWaiting` more wait for a slot, each at most
 * `waitMs`; past either, 503 with Retry-After. Each run may hold 2 GB and every core of
 * ClickHouse for 30 s, so without a bound a burst of queries multiplies both.
 */
export type QueryGateLimits = Readonly<{ maxRunning: number; maxWaiting: number; waitMs: number }>;

const AT_CAPACITY = 'The server is running as many queries as it takes at once; retry shortly.';

export class QueryGate {
  private readonly queue: PQueue;

  constructor(private readonly limits: QueryGateLimits) {
    this.queue = new PQueue({ concurrency: limits.maxRunning });
  }

  /** Runs counted now: running and waiting. */
  counts = () => ({ running: this.queue.pending, waiting: this.queue.size });

  /**
   * Runs `run` once a slot is free; its slot is held until `run` settles (a query its client left
   * holds it until ClickHouse has stopped it). `hangUp` (the client closing) takes a waiting run
   * out of the queue at once.
   */
  async run<T>(run: () => Promise<T>, hangUp: AbortSignal): Promise<T> {
    const { maxRunning, maxWaiting, waitMs } = this.limits;
    if (this.queue.pending >= maxRunning && this.queue.size >= maxWaiting)
      throw new ServiceUnavailable(AT_CAPACITY);
    // aborted only while the run waits: p-queue would also give up on a running task it was told
    // to abort, freeing its slot before the query has stopped
    const waiting = new AbortController();
    const timer = setTimeout(() => waiting.abort(new ServiceUnavailable(AT_CAPACITY)), waitMs);
    const leave = () => waiting.abort(hangUp.reason);
    hangUp.addEventListener('abort', leave, { once: true });
    if (hangUp.aborted) leave();
    const started = () => {
      clearTimeout(timer);
      hangUp.removeEventListener('abort', leave);
    };
    try {
      return await this.queue.add(
        () => {
          started();
          return run();
        },
        { signal: waiting.signal },
      );
    } finally {
      started();
    }
  }
}
