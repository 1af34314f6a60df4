import type { RecordedEvent } from '../core/event.ts';
import type { AllFilter, ReadAllOptions } from './eventStore.ts';

/** What one committed append of this process hands to the tail (see `publish`). */
export type PublishedAppend = Readonly<{
  /** the last position drawn by the append before this one (any process): `first drawn - 1` */
  previousDrawn: bigint;
  /** the last position this append drew (it may have used fewer: ids already in the log) */
  lastDrawn: bigint;
  /** its new events, in position order, exactly as a read of the log returns them */
  events: readonly RecordedEvent[];
}>;

/** appends held back because one drawn before them has not been published yet */
const MAX_HELD = 64;
/** with nothing announced, how long a reader trusts the window before it asks the log anyway */
const RECHECK_MS = 1000;

/**
 * The newest events of the log, kept once for every live subscription of this process. Appends made
 * by this process hand their events over in memory (`publish`), decoded as they were appended, so a
 * projection running beside capture reads nothing back from Postgres; the log is read only for
 * what other processes appended, for a subscriber behind the window (after a restart or lag), and to
 * heal a gap this process cannot vouch for.
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
  /**
   * Every position up to here is accounted for: in the window, or never to hold an event (drawn by
   * an append that used fewer). Always ≥ upTo: a reader that has seen N never finds a commit below N.
   */
  let knownThrough = -1n;
  let held: PublishedAppend[] = [];
  let filling: Promise<number> | undefined;
  /** the highest last position an append announced (NOTIFY: any process, this one included) */
  let announced = -1n;
  let lastFill = 0;

  const matches = (e: RecordedEvent, filter: AllFilter | undefined) =>
    (!filter?.eventTypes || filter.eventTypes.length === 0 || filter.eventTypes.includes(e.type)) &&
    (!filter?.streamPrefixes ||
      filter.streamPrefixes.length === 0 ||
      filter.streamPrefixes.some((p) => e.streamName.startsWith(p)));

  const push = (fresh: readonly RecordedEvent[]) => {
    for (const e of fresh) if (e.position > upTo) events.push(e);
    if (events.length > 0 && events[events.length - 1]!.position > upTo)
      upTo = events[events.length - 1]!.position;
    if (upTo > knownThrough) knownThrough = upTo;
    // trimmed a quarter at a time: one copy of the window per commit was ≈ 1.5 % of the main
    // thread under single-event requests
    if (events.length > capacity + (capacity >> 2)) {
      const dropped = events.length - capacity;
      after = events[dropped - 1]!.position;
      events = events.slice(dropped);
    }
  };

  /** Reads what was appended after `upTo`; returns how many events arrived. Concurrent callers share it. */
  const fill = () =>
    (filling ??= (async () => {
      lastFill = Date.now();
      try {
        const fresh = await readAll({ after: upTo < 0n ? 'start' : upTo, maxCount: fetchSize });
        const before = upTo;
        push(fresh); // an append published while this read was under way is not taken twice
        held = held.filter((h) => h.lastDrawn > upTo);
        chain();
        return fresh.filter((e) => e.position > before).length;
      } finally {
        filling = undefined;
      }
    })());

  /** Takes held appends that now follow on from what is accounted for. */
  const chain = () => {
    for (let progressed = true; progressed; ) {
      progressed = false;
      for (const [i, h] of held.entries()) {
        if (h.previousDrawn > knownThrough) continue;
        held.splice(i, 1);
        push(h.events);
        if (h.lastDrawn > knownThrough) knownThrough = h.lastDrawn;
        progressed = true;
        break;
      }
    }
  };

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
     * An append announced by its last position (NOTIFY, any process, this one included). Says
     * whether it is news: past what the tail accounts for, so that a reader must ask the log.
     */
    announce(lastPosition: bigint): boolean {
      if (lastPosition > announced) announced = lastPosition;
      return lastPosition > knownThrough;
    },
    /**
     * A committed append of this process. Every position up to `previousDrawn` was drawn by an append
     * that had finished (committed or rolled back) before this one took the log's lock, so when the
     * tail accounts for all of them this append's events follow on directly. Otherwise (another
     * process appended in between, or an earlier append of ours has not been published yet) it is
     * held until it does follow on; what never does is read from the log by the next fill.
     */
    publish(append: PublishedAppend): void {
      if (after === undefined || append.lastDrawn <= upTo) return; // no reader yet, or read already
      held.push(append);
      if (held.length > MAX_HELD) held.shift();
      chain();
    },
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
        if (knownThrough < upTo) knownThrough = upTo;
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
        // What this process appended is here already; the log is read only when an append could
        // not be chained (another process's, or one published out of order).
        if (out.length > 0 && held.length === 0) return { events: out, scannedTo: cursor };
        // Nor when nothing beyond it was announced: every wake of a subscriber whose filter the
        // new events did not match (and every echo of our own NOTIFY) queried the log — ≈ one
        // query a commit a subscriber. A missed announcement is caught within RECHECK_MS.
        if (held.length === 0 && announced <= knownThrough && Date.now() - lastFill < RECHECK_MS)
          return { events: out, scannedTo: cursor };
        if ((await fill()) === 0) return { events: out, scannedTo: cursor };
        // the window moved past `cursor` while this reader waited: read the rest from the log
        if (cursor < after) return direct(cursor, out);
      }
    },
  };
}
