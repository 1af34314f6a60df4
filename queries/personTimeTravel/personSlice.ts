import { captureStream } from '../../commands/capture/model/eventCaptured.ts';
import { personStream } from '../../commands/persons/model/personEvents.ts';
import type { PersonRef as PersonIdRef } from '../../commands/persons/model/personRef.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import {
  type PersonIdentity,
  type PersonsReader,
  personsReader,
} from '../../projections/persons/personsReader.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { domainError, fail } from '../../src/core/errors.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { type IdentityOf, PERSON_LOG_TYPES } from './logReplay.ts';

/**
 * One person's part of the log (README.md, "Cost"): instead of folding the whole log, time travel
 * folds only the events that can change the persons of the distinct ids linked to the asked one.
 *
 * Why that is exact: the persons fold reads, for an event, the persons of its own distinct id and —
 * for a merge asked for by `$identify`, `$create_alias` or `$merge_dangerously` — of the other id
 * (`PersonLink`, recorded by the fold itself in `person_links`); a management event reads the person
 * of the distinct id it names, which that person had when the command was decided. So the distinct
 * ids connected through links form a closed component: no event outside their streams touches their
 * persons, and no event of theirs touches anyone else's. The only global state the fold keeps is the
 * integer id counter (and uuids derived from it after a clash), which is why identities come from
 * the read model (`person_identities`) and never from the slice's own numbering.
 *
 * The slice is read from the log's own indexes: the stream `capture-<project>:<distinct id>` of each
 * distinct id of the component, and `person-<project>:<uuid>` of each person ever created for one
 * of them (the management commands append there, naming the person by the uuid the read model gave
 * it), merged by log position, up to the position the persons read model has applied — so every
 * person the slice creates has its row in `person_identities`, and answers agree with the live reads.
 */

/** What the slice needs from the persons read model (`personsReader`). */
export type PersonIndex = Pick<
  PersonsReader,
  | 'identitiesByRef'
  | 'identitiesCreatedFor'
  | 'linkedDistinctIds'
  | 'appliedPosition'
  | 'identityIndexComplete'
>;

/** The work one answer may do; past either limit it is refused (400 `person_history_too_large`). */
export type TimeTravelLimits = Readonly<{
  /** distinct ids linked to the person (each one stream to read) */
  maxDistinctIds: number;
  /** events read from the log */
  maxEvents: number;
}>;
export const TIME_TRAVEL_LIMITS: TimeTravelLimits = { maxDistinctIds: 1_000, maxEvents: 100_000 };

export type TimeTravelDeps = Readonly<{
  store: Pick<EventStore, 'readStream'>;
  index: PersonIndex;
  /** waits (bounded) until the persons read model has applied the newest person-relevant event */
  catchUp?: () => Promise<unknown>;
  limits?: TimeTravelLimits;
  /** called once per answer with what it read (tests, logs) */
  onRead?: (stats: SliceStats) => void;
}>;

export type SliceStats = { distinctIds: number; streams: number; reads: number; events: number };

export const timeTravelDeps = (ctx: AppContext): TimeTravelDeps => ({
  store: ctx.store,
  index: personsReader(ctx.pool),
  catchUp: () => awaitNewest(ctx, personsProjection.filter, personsProjection),
});

/** A person by integer id or uuid (REST `:id`), or by a distinct id (the CLI). */
export type PersonRef = PersonIdRef | { kind: 'distinct_id'; distinctId: string };

/** 409: the index cannot answer for this log; a rebuild recomputes it from the log as it is. */
function rebuildRequired(why: string): never {
  fail(
    domainError(
      'conflict',
      'rebuild_required',
      `Person time travel needs the persons read model rebuilt (${why}): npm run cli -- rebuild persons`,
    ),
  );
}

function tooLarge(what: string): never {
  fail(
    domainError(
      'validation',
      'person_history_too_large',
      `This person's history is too large to replay: ${what}.`,
    ),
  );
}

/** Lets other requests run: at most every `everyMs` of work. */
export function pacer(everyMs = 10): () => Promise<void> {
  let last = performance.now();
  return async () => {
    if (performance.now() - last < everyMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    last = performance.now();
  };
}

/**
 * Replays the part of the log that decides the persons `ref` names, in log order, into the fold
 * `make` builds (given how to name the persons it creates). Null — without reading the log — when
 * no person was ever created for `ref` in the project (another project's person, or nobody).
 */
export async function replayPersonSlice<F extends { apply(event: RecordedEvent): void }>(
  deps: TimeTravelDeps,
  projectId: number,
  ref: PersonRef,
  make: (identityOf: IdentityOf) => F,
): Promise<F | null> {
  const limits = deps.limits ?? TIME_TRAVEL_LIMITS;
  const { index } = deps;
  await deps.catchUp?.();
  if (!(await index.identityIndexComplete()))
    rebuildRequired('it was built before its time-travel index existed');
  const upTo = await index.appliedPosition();
  let seeds: string[];
  if (ref.kind === 'distinct_id') seeds = [ref.distinctId];
  else {
    seeds = (await index.identitiesByRef(projectId, ref)).map((i) => i.distinctId);
    if (seeds.length === 0) return null;
  }
  const distinctIds = await linkedComponent(index, projectId, seeds, limits.maxDistinctIds);
  const identities = await index.identitiesCreatedFor(projectId, distinctIds);
  if (identities.length === 0) return null; // no person ever held these ids
  const streams = [
    ...distinctIds.map((d) => captureStream(projectId, d)),
    ...new Set(identities.map((i) => personStream(projectId, i.uuid))),
  ];
  const fold = make(identitiesByCreation(identities));
  const stats: SliceStats = {
    distinctIds: distinctIds.length,
    streams: streams.length,
    reads: 0,
    events: 0,
  };
  const pause = pacer();
  for await (const event of mergedStreams(deps.store, streams, upTo, limits, stats)) {
    fold.apply(event);
    await pause();
  }
  deps.onRead?.(stats);
  return fold;
}

/** The seeds and every distinct id linked to them, directly or through others. */
async function linkedComponent(
  index: PersonIndex,
  projectId: number,
  seeds: readonly string[],
  max: number,
): Promise<string[]> {
  const seen = new Set(seeds);
  let frontier = [...seen];
  while (frontier.length > 0) {
    if (seen.size > max) tooLarge(`more than ${max} distinct ids are linked to it`);
    const next: string[] = [];
    for (const d of await index.linkedDistinctIds(projectId, frontier))
      if (!seen.has(d)) {
        seen.add(d);
        next.push(d);
      }
    frontier = next;
  }
  if (seen.size > max) tooLarge(`more than ${max} distinct ids are linked to it`);
  return [...seen];
}

/** The live identity of each person the slice creates, by where and for whom it was created. */
function identitiesByCreation(identities: readonly PersonIdentity[]): IdentityOf {
  const key = (position: bigint, distinctId: string) => `${position}|${distinctId}`;
  const byCreation = new Map(
    identities.map((i) => [key(i.position, i.distinctId), { id: i.id, uuid: i.uuid }]),
  );
  return (c) => {
    const found = byCreation.get(key(c.position, c.distinctId));
    // Only when the log changed under the read model: events erased from it by hand (README.md).
    if (!found)
      rebuildRequired(
        `it has no person created for "${c.distinctId}" at log position ${c.position}, so the log changed since it was built`,
      );
    return found;
  };
}

/** Reads one stream a page at a time, up to `upTo`, keeping only the events the persons fold reads. */
class StreamCursor {
  private page: RecordedEvent[] = [];
  private at = 0;
  private nextRevision = 0n;
  private done = false;

  constructor(
    private readonly store: TimeTravelDeps['store'],
    private readonly name: string,
    private readonly upTo: bigint,
    private readonly pageSize: number,
    private readonly count: (n: number) => void,
  ) {}

  /** The stream's next event, or undefined at its end. */
  async peek(): Promise<RecordedEvent | undefined> {
    while (this.at >= this.page.length) {
      if (this.done) return undefined;
      const read = await this.store.readStream(this.name, {
        fromRevision: this.nextRevision,
        maxCount: this.pageSize,
      });
      this.count(read.length);
      if (read.length < this.pageSize) this.done = true;
      if (read.length > 0) this.nextRevision = read[read.length - 1]!.revision + 1n;
      const kept: RecordedEvent[] = [];
      for (const e of read) {
        if (e.position > this.upTo) {
          this.done = true; // positions grow with revisions: the rest is past the prefix too
          break;
        }
        if (PERSON_LOG_TYPES.includes(e.type)) kept.push(e);
      }
      this.page = kept;
      this.at = 0;
    }
    return this.page[this.at];
  }

  advance(): void {
    this.at++;
  }
}

/** Events buffered across all cursors, roughly: a page per stream shrinks as streams multiply. */
const BUFFERED_EVENTS = 20_000;

/** The events of `streams` up to `upTo`, merged by log position; refuses past `limits.maxEvents`. */
async function* mergedStreams(
  store: TimeTravelDeps['store'],
  streams: readonly string[],
  upTo: bigint,
  limits: TimeTravelLimits,
  stats: SliceStats,
): AsyncGenerator<RecordedEvent> {
  const pageSize = Math.max(16, Math.min(1000, Math.floor(BUFFERED_EVENTS / streams.length)));
  const count = (n: number) => {
    stats.reads++;
    stats.events += n;
    if (stats.events > limits.maxEvents) tooLarge(`it has more than ${limits.maxEvents} events`);
  };
  const heap = new CursorHeap();
  const cursors = streams.map((s) => new StreamCursor(store, s, upTo, pageSize, count));
  // first pages a few streams at a time
  for (let i = 0; i < cursors.length; i += 8) {
    const batch = cursors.slice(i, i + 8);
    const heads = await Promise.all(batch.map((c) => c.peek()));
    heads.forEach((head, j) => {
      if (head) heap.push(head.position, batch[j]!);
    });
  }
  for (let top = heap.pop(); top; top = heap.pop()) {
    const event = (await top.peek())!;
    yield event;
    top.advance();
    const next = await top.peek();
    if (next) heap.push(next.position, top);
  }
}

/** A binary min-heap of cursors by the position of their next event. */
class CursorHeap {
  private readonly items: { position: bigint; cursor: StreamCursor }[] = [];

  push(position: bigint, cursor: StreamCursor): void {
    const items = this.items;
    items.push({ position, cursor });
    for (let i = items.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (items[parent]!.position <= items[i]!.position) break;
      [items[parent], items[i]] = [items[i]!, items[parent]!];
      i = parent;
    }
  }

  pop(): StreamCursor | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let min = i;
        if (l < items.length && items[l]!.position < items[min]!.position) min = l;
        if (r < items.length && items[r]!.position < items[min]!.position) min = r;
        if (min === i) break;
        [items[min], items[i]] = [items[i]!, items[min]!];
        i = min;
      }
    }
    return top?.cursor;
  }
}
