import { randomUUID } from 'node:crypto';
import {
  type AllStreamSubscription,
  ANY,
  type AppendExpectedRevision,
  BACKWARDS,
  END,
  type RecordedEvent as EsdbRecordedEvent,
  EventStoreDBClient,
  eventTypeFilter,
  excludeSystemEvents,
  type Filter,
  FORWARDS,
  jsonEvent,
  NO_STREAM,
  type Position,
  type ReadPosition,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  streamNameFilter,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import type { Event, EventMetadata, EventToAppend, RecordedEvent } from '../core/event.ts';
import { storableValue } from '../core/storable.ts';
import {
  type AllFilter,
  type AllPosition,
  type AppendedEvent,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type ReadAllOptions,
  type ReadStreamOptions,
  type SubscribeOptions,
  type Subscription,
  WrongExpectedRevisionError,
} from './eventStore.ts';

const PAGE_SIZE = 500;
const RETRY_DELAY_MS = 500;

/**
 * Our positions are ESDB commit positions. gRPC appends never share a commit between events
 * (each event's commit === its prepare), so {p, p} addresses exactly the event at p.
 */
const at = (p: bigint): Position => ({ commit: p, prepare: p });
const lowerBound = (after: AllPosition | undefined): bigint =>
  after === undefined || after === 'start' ? -1n : after;

type Named = Readonly<{ streamId: string; type: string }>;

/** Client-side check of everything the port promises; server-side filters are only a pre-selection. */
function matches(e: Named, filter: AllFilter | undefined): boolean {
  if (e.type.startsWith('$') || e.streamId.startsWith('$')) return false;
  const prefixes = filter?.streamPrefixes ?? [];
  if (prefixes.length > 0 && !prefixes.some((p) => e.streamId.startsWith(p))) return false;
  const types = filter?.eventTypes ?? [];
  return types.length === 0 || types.includes(e.type);
}

/** ESDB takes a single filter, on stream names or on types; matches() does the rest. */
function serverFilter(filter: AllFilter | undefined): Filter {
  if (filter?.streamPrefixes?.length)
    return streamNameFilter({ prefixes: [...filter.streamPrefixes] });
  // a prefix filter is wider than our exact type match, never narrower
  if (filter?.eventTypes?.length) return eventTypeFilter({ prefixes: [...filter.eventTypes] });
  return excludeSystemEvents();
}

const toEsdbRevision = (r: ExpectedRevision): AppendExpectedRevision =>
  r === 'no_stream' ? NO_STREAM : r === 'stream_exists' ? STREAM_EXISTS : r === 'any' ? ANY : r;

const isJsonObject = (m: unknown): m is object =>
  typeof m === 'object' && m !== null && !Array.isArray(m) && !(m instanceof Uint8Array);

function toRecorded(e: EsdbRecordedEvent): RecordedEvent {
  if (!e.isJson) throw new Error(`ESDB event ${e.id} in ${e.streamId} is not JSON`);
  // stream reads carry a position only from server 22.6 on; without it we cannot honour the port
  if (!e.position)
    throw new Error(`ESDB event ${e.id} in ${e.streamId} has no position (server < 22.6?)`);
  return {
    id: e.id,
    streamName: e.streamId,
    revision: e.revision,
    position: e.position.commit,
    type: e.type,
    // storable, as the Postgres log reads them (src/core/storable.ts): a walk, no text to scan here
    data: storableValue(e.data as object),
    // events not written by us may lack our metadata; occurredAt is the one field we require
    metadata: isJsonObject(e.metadata)
      ? storableValue(e.metadata as EventMetadata)
      : { occurredAt: e.created.toISOString() },
    recordedAt: e.created,
  };
}

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of source) items.push(item);
  return items;
}

export function createEsdbEventStore(connectionString: string): EventStore {
  const client = EventStoreDBClient.connectionString(connectionString);
  const subscriptions = new Set<Subscription>();

  async function appendToStream<E extends Event>(
    streamName: string,
    events: readonly EventToAppend<E>[],
    options: { expectedRevision: ExpectedRevision },
  ): Promise<AppendResult> {
    const expected = options.expectedRevision;
    const ids = events.map((e) => e.id ?? randomUUID());
    try {
      const result = await client.appendToStream(
        streamName,
        events.map((e, i) =>
          jsonEvent({
            id: ids[i],
            type: e.type,
            data: e.data as Record<string, unknown>,
            metadata: e.metadata,
          }),
        ),
        { expectedRevision: toEsdbRevision(expected) },
      );
      // ESDB reports the last event's position, or none at all for an empty append; the position of
      // each event is read back from the stream (an idempotent retry reports where they already were)
      const appended = await appendedEvents(streamName, ids, result.nextExpectedRevision);
      return {
        nextExpectedRevision: result.nextExpectedRevision,
        position: result.position?.commit ?? -1n,
        appended,
      };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        throw new WrongExpectedRevisionError(streamName, expected, error.actualVersion);
      }
      throw error;
    }
  }

  async function appendedEvents(
    streamName: string,
    ids: readonly string[],
    last: bigint,
  ): Promise<AppendedEvent[]> {
    if (ids.length === 0 || last < 0n) return [];
    const recent = await readStream(streamName, {
      direction: 'backwards',
      fromRevision: last,
      maxCount: ids.length,
    });
    const byId = new Map(recent.map((e) => [e.id, e]));
    return ids.flatMap((id) => {
      const e = byId.get(id);
      return e ? [{ id: e.id, type: e.type, revision: e.revision, position: e.position }] : [];
    });
  }

  async function readStream<E extends Event = Event>(
    streamName: string,
    options: ReadStreamOptions = {},
  ): Promise<RecordedEvent<E>[]> {
    if (options.maxCount === 0) return [];
    const backwards = options.direction === 'backwards';
    try {
      const resolved = await collect(
        client.readStream(streamName, {
          direction: backwards ? BACKWARDS : FORWARDS,
          fromRevision: options.fromRevision ?? (backwards ? END : START),
          maxCount: options.maxCount,
        }),
      );
      return resolved.flatMap((r) => (r.event ? [toRecorded(r.event) as RecordedEvent<E>] : []));
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
  }

  async function readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const maxCount = options.maxCount ?? Number.POSITIVE_INFINITY;
    // +1: a forwards page starts with the already-seen event at the cursor
    const pageSize = Math.min(PAGE_SIZE, Math.max(32, maxCount + 1));
    // both bounds exclusive; whichever side we read away from doubles as the paging cursor
    let lo = lowerBound(options.after);
    let hi = options.before === undefined || options.before === 'end' ? undefined : options.before;
    const out: RecordedEvent[] = [];
    while (out.length < maxCount) {
      // ESDB includes the event at fromPosition when reading forwards and excludes it backwards;
      // the bound checks below make both exclusive regardless.
      const fromPosition: ReadPosition = backwards
        ? hi === undefined
          ? END
          : at(hi)
        : lo < 0n
          ? START
          : at(lo);
      const page = await collect(
        client.readAll({
          fromPosition,
          direction: backwards ? BACKWARDS : FORWARDS,
          maxCount: pageSize,
        }),
      );
      for (const { event: e } of page) {
        if (!e) continue;
        const p = e.position.commit;
        if (backwards ? p <= lo : hi !== undefined && p >= hi) return out;
        if (backwards ? hi !== undefined && p >= hi : p <= lo) continue;
        if (backwards) hi = p;
        else lo = p;
        if (!matches(e, options.filter)) continue;
        out.push(toRecorded(e));
        if (out.length >= maxCount) return out;
      }
      if (page.length < pageSize) return out;
    }
    return out;
  }

  async function headPosition(): Promise<bigint> {
    const [newest] = await readAll({ direction: 'backwards', maxCount: 1 });
    return newest?.position ?? -1n;
  }

  function subscribeToAll(
    handler: (event: RecordedEvent) => Promise<void> | void,
    options: SubscribeOptions = {},
  ): Subscription {
    let position = lowerBound(options.after);
    let stopped = false;
    let current: AllStreamSubscription | undefined;
    let reported = false;

    async function consume(sub: AllStreamSubscription): Promise<void> {
      // 'caughtUp' is emitted when the server's marker passes the stream's transform, while events
      // before it may still wait, unhandled, in the stream's buffer. Report once those are handled.
      let taken = 0;
      let busy = false;
      let caughtUpAt: number | undefined;
      const report = () => {
        if (reported || busy || caughtUpAt === undefined || taken < caughtUpAt) return;
        reported = true;
        try {
          options.onCaughtUp?.();
        } catch (error) {
          options.onError?.(error);
        }
      };
      sub.once('caughtUp', () => {
        caughtUpAt = taken + sub.readableLength;
        report();
      });
      for await (const { event: e } of sub) {
        taken++;
        if (stopped) return;
        // the position check guards resubscriptions and a server that treated `after` as inclusive
        if (e && e.position.commit > position) {
          if (matches(e, options.filter)) {
            busy = true;
            try {
              await handler(toRecorded(e));
            } finally {
              busy = false;
            }
          }
          position = e.position.commit;
        }
        report();
      }
      if (!stopped) throw new Error('ESDB subscription to $all ended unexpectedly');
    }

    // Like the Postgres adapter: on any failure (handler or connection) report it, then
    // resubscribe after the last handled event, so the failed event is retried.
    const loop = (async () => {
      while (!stopped) {
        const sub = client.subscribeToAll({
          fromPosition: position < 0n ? START : at(position),
          filter: serverFilter(options.filter),
        });
        current = sub;
        // errors reach us through the iterator; this keeps late ones (after stop) from crashing
        sub.on('error', () => {});
        try {
          await consume(sub);
        } catch (error) {
          if (!stopped) options.onError?.(error);
        } finally {
          await sub.unsubscribe().catch(() => {});
          sub.destroy();
        }
        if (!stopped) await new Promise((r) => setTimeout(r, RETRY_DELAY_MS));
      }
    })();

    const subscription: Subscription = {
      stop: async () => {
        stopped = true;
        subscriptions.delete(subscription);
        if (current) {
          await current.unsubscribe().catch(() => {});
          // ends the for-await even if the server never closes the cancelled call
          current.destroy();
        }
        await loop;
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  // No multi-stream transaction in EventStoreDB: stream by stream, idempotent by event id on retry.
  async function appendMany(batch: Parameters<EventStore['appendMany']>[0]) {
    const results = [];
    for (const item of batch) {
      results.push(
        await appendToStream(item.streamName, item.events, {
          expectedRevision: item.expectedRevision,
        }),
      );
    }
    return results;
  }

  return {
    appendToStream,
    appendMany,
    readStream,
    readAll,
    // a recorded event is a positioned one: EventStoreDB sends every field either way
    readPositioned: readAll,
    headPosition,
    subscribeToAll,
    // the server delivers event by event; each is a batch of one
    subscribeToAllInBatches: (handler, options) =>
      subscribeToAll((event) => handler([event]), options),
    close: async () => {
      // a live subscription would otherwise keep retrying against a disposed client
      await Promise.all([...subscriptions].map((s) => s.stop()));
      await client.dispose();
    },
  };
}
