import type { Event, EventToAppend, PositionedEvent, RecordedEvent } from '../core/event.ts';

/**
 * The event log port, shaped after EventStoreDB so that its adapter is thin:
 * revisions are 0-based per stream, positions are global and grow in commit order.
 */
export type ExpectedRevision = bigint | 'no_stream' | 'stream_exists' | 'any';

/** 'start' or the position of the last event already seen (reads are exclusive of it). */
export type AllPosition = 'start' | bigint;

export type AllFilter = Readonly<{
  streamPrefixes?: readonly string[];
  eventTypes?: readonly string[];
}>;

/** Where one event of an append is in the log (for an id already in the log: where it already was). */
export type AppendedEvent = Readonly<{
  id: string;
  type: string;
  revision: bigint;
  position: bigint;
}>;

export type AppendResult = Readonly<{
  /** revision of the last event in the stream after the append */
  nextExpectedRevision: bigint;
  /** global position of the last appended event */
  position: bigint;
  /** every event of the request, in order, with its revision and position */
  appended: readonly AppendedEvent[];
}>;

export type StreamAppend = Readonly<{
  streamName: string;
  events: readonly EventToAppend[];
  expectedRevision: ExpectedRevision;
}>;

export type ReadStreamOptions = Readonly<{
  fromRevision?: bigint;
  direction?: 'forwards' | 'backwards';
  maxCount?: number;
}>;

export type ReadAllOptions = Readonly<{
  /** exclusive: events strictly after this position ('start' = from the first event) */
  after?: AllPosition;
  /** with direction 'backwards', exclusive upper bound ('end' = from the newest) */
  before?: bigint | 'end';
  direction?: 'forwards' | 'backwards';
  maxCount?: number;
  filter?: AllFilter;
}>;

export type Subscription = Readonly<{
  /** resolves once the handler has stopped being called */
  stop: () => Promise<void>;
}>;

export type SubscribeOptions = Readonly<{
  after?: AllPosition;
  filter?: AllFilter;
  /** called when the subscription has read everything that existed when it started (again after recovering from an error) */
  onCaughtUp?: () => void;
  onError?: (error: unknown) => void;
}>;

export interface EventStore {
  appendToStream<E extends Event>(
    streamName: string,
    events: readonly EventToAppend<E>[],
    options: { expectedRevision: ExpectedRevision },
  ): Promise<AppendResult>;

  /**
   * Appends to several streams at once. The Postgres adapter does it in one transaction (all or
   * nothing); EventStoreDB has no multi-stream transaction, so its adapter appends stream by stream
   * and a failure may leave earlier streams appended — callers retry with the same event ids,
   * which the log treats as no-ops.
   */
  appendMany(batch: readonly StreamAppend[]): Promise<AppendResult[]>;

  /** Events of one stream; an absent stream yields nothing. */
  readStream<E extends Event = Event>(
    streamName: string,
    options?: ReadStreamOptions,
  ): Promise<RecordedEvent<E>[]>;

  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;

  /**
   * `readAll`'s events with their type, data and position only: what a rebuild's bulk fold reads
   * (the Postgres adapter then reads and decodes nothing else of the log).
   */
  readPositioned(options?: ReadAllOptions): Promise<PositionedEvent[]>;

  /** Position of the newest event in the log, or -1n when it is empty. */
  headPosition(): Promise<bigint>;

  /**
   * Catch-up then live: the handler sees every event after `after` exactly once, in position order;
   * the next event is delivered only after the handler's promise resolves.
   */
  subscribeToAll(
    handler: (event: RecordedEvent) => Promise<void> | void,
    options?: SubscribeOptions,
  ): Subscription;

  /**
   * `subscribeToAll`, its events handed over as batches in position order (each batch once the
   * previous one's promise resolved; a failing handler gets its whole batch again). The Postgres
   * adapter hands each page over whole — for its own appends, the events as they were appended,
   * without reading them back.
   */
  subscribeToAllInBatches(
    handler: (events: readonly RecordedEvent[]) => Promise<void> | void,
    options?: SubscribeOptions,
  ): Subscription;

  close(): Promise<void>;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamName: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`stream ${streamName}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}
