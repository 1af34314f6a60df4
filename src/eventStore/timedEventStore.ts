import type { EventStore } from './eventStore.ts';

/**
 * The store with every append timed (`observe` gets seconds): the acknowledgement path of capture
 * and of every command waits on it, so its latency is the first number to read when writes slow.
 */
export function timedEventStore(store: EventStore, observe: (seconds: number) => void): EventStore {
  const timed = async <T>(append: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await append();
    } finally {
      observe((performance.now() - started) / 1000);
    }
  };
  // both adapters are plain objects of closures, so a copy with two methods replaced is the store
  return {
    ...store,
    appendToStream: (streamName, events, options) =>
      timed(() => store.appendToStream(streamName, events, options)),
    appendMany: (batch) => timed(() => store.appendMany(batch)),
  };
}
