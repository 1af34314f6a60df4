import type { RecordedEvent } from '../core/event.ts';
import type { AllFilter, ReadAllOptions } from './eventStore.ts';

/**
 * The newest events of the log, read once for every live subscription. Each projection used to
 * read (and parse) every captured event itself; near the head they now share one read.
 * Invariant: `events` holds every event with a position in (`after`, `upTo`], in order — the log
 * hands out positions in commit order, so reading "everything after upTo" never skips one.
 */
export function createLiveTail(
  readAll: (options: ReadAllOptions) => Promise<RecordedEvent[]>,
  headPosition: () => Promise<bigint>,
  options: { capacity?: number; fetch?: number } = {},
) {
  const capacity = options.capacity ?? 20_000;
  const fetchSize = options.fetch ?? 2_000;
  let events: RecordedEvent[] = [];
  let after: bigint | undefined; // undefined until first used
  let upTo = -1n;
  let filling: Promise<number> | undefined;

  const matches = (e: RecordedEvent, filter: AllFilter | undefined) =>
    (!filter?.eventTypes || filter.eventTypes.length === 0 || filter.eventTypes.includes(e.type)) &&
    (!filter?.streamPrefixes ||
      filter.streamPrefixes.length === 0 ||
      filter.streamPrefixes.some((p) => e.streamName.startsWith(p)));

  /** Reads what was appended after `upTo`; returns how many events arrived. Concurrent callers share it. */
  const fill = () =>
    (filling ??= (async () => {
      try {
        const fresh = await readAll({ after: upTo < 0n ? 'start' : upTo, maxCount: fetchSize });
        if (fresh.length === 0) return 0;
        events.push(...fresh);
        upTo = fresh[fresh.length - 1]!.position;
        if (events.length > capacity) {
          const dropped = events.length - capacity;
          after = events[dropped - 1]!.position;
          events = events.slice(dropped);
        }
        return fresh.length;
      } finally {
        filling = undefined;
      }
    })());

  /** First index with position > p (events are ascending). */
  const indexAfter = (p: bigint) => {
    let lo = 0;
    let hi = events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (events[mid]!.position <= p) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };

  return {
    /**
     * Same events as readAll({after: from, maxCount, filter}), plus `scannedTo`: every event up to
     * it has been looked at, so a subscriber with a narrow filter can move its cursor there even
     * when nothing matched (otherwise it would rescan the same tail on every wake).
     */
    async read(
      from: bigint,
      maxCount: number,
      filter: AllFilter | undefined,
    ): Promise<{ events: RecordedEvent[]; scannedTo: bigint }> {
      if (after === undefined) {
        after = await headPosition();
        if (upTo < after) upTo = after;
      }
      const direct = async (cursor: bigint, out: RecordedEvent[]) => {
        // Every event up to `upTo` was committed before this read starts, so a read that ends
        // short of its page has looked at them all: the reader moves there even when nothing
        // matched, and reads from the shared tail next time instead of querying on every wake.
        const seen = upTo;
        const wanted = maxCount - out.length;
        const rest = await readAll({
          after: cursor < 0n ? 'start' : cursor,
          maxCount: wanted,
          ...(filter ? { filter } : {}),
        });
        const all = out.concat(rest);
        const last = all.length > 0 ? all[all.length - 1]!.position : cursor;
        return { events: all, scannedTo: rest.length < wanted && seen > last ? seen : last };
      };
      if (from < after) return direct(from, []);
      const out: RecordedEvent[] = [];
      let cursor = from;
      for (;;) {
        for (let i = indexAfter(cursor); i < events.length && out.length < maxCount; i++) {
          if (matches(events[i]!, filter)) out.push(events[i]!);
          cursor = events[i]!.position;
        }
        if (out.length >= maxCount) return { events: out, scannedTo: cursor };
        if (cursor < upTo) cursor = upTo; // the rest of the tail matched nothing
        if ((await fill()) === 0) return { events: out, scannedTo: cursor };
        // the window moved past `cursor` while this reader waited: read the rest from the log
        if (cursor < after) return direct(cursor, out);
      }
    },
  };
}
