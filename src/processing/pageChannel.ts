/**
 * Pages handed from one replay to another running beside it (the ClickHouse rebuild reading the
 * log, the persons rebuild folding it): at most `capacity` pages wait, so the reader never runs
 * far ahead of the fold, and a failure on either side stops the other.
 */
export type PageChannel<T> = AsyncIterable<T> & {
  /** waits while `capacity` pages wait; throws once the consumer has stopped */
  push(page: T): Promise<void>;
  /** no more pages: the consumer finishes, or fails with `error` */
  end(error?: unknown): void;
  /** the consumer gives up: a waiting or later `push` throws `reason` */
  abandon(reason: unknown): void;
};

export function pageChannel<T>(capacity: number): PageChannel<T> {
  const pages: T[] = [];
  let ended: { error?: unknown } | undefined;
  let abandoned: { reason: unknown } | undefined;
  let wakeConsumer = () => {};
  let wakeProducer = () => {};
  return {
    async push(page) {
      while (!abandoned && pages.length >= capacity)
        await new Promise<void>((r) => (wakeProducer = r));
      if (abandoned) throw abandoned.reason;
      pages.push(page);
      wakeConsumer();
    },
    end(error) {
      ended ??= error === undefined ? {} : { error };
      wakeConsumer();
    },
    abandon(reason) {
      abandoned ??= { reason };
      wakeProducer();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const page = pages.shift();
        if (page !== undefined) {
          wakeProducer();
          yield page;
          continue;
        }
        if (ended) {
          if ('error' in ended) throw ended.error;
          return;
        }
        await new Promise<void>((r) => (wakeConsumer = r));
      }
    },
  };
}
