import type { RecordedEvent } from '../core/event.ts';
import type { AllFilter, EventStore } from './eventStore.ts';

/** Every event of the log that `filter` selects, in log order, read a page at a time. */
export async function* readAllEvents(
  store: EventStore,
  filter: AllFilter,
  pageSize = 1000,
): AsyncGenerator<RecordedEvent> {
  let after: bigint | 'start' = 'start';
  for (;;) {
    const page = await store.readAll({ after, maxCount: pageSize, filter });
    yield* page;
    if (page.length < pageSize) return;
    after = page[page.length - 1]!.position;
  }
}
