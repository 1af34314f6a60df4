/** An event as deciders produce it: JSON-safe data, no Dates or bigints inside. */
export type Event<T extends string = string, D extends object = object> = Readonly<{
  type: T;
  data: D;
}>;

/** Who and what caused an event; stored beside it in the log. */
export type EventMetadata = Readonly<{
  projectId?: number | undefined;
  /** acting user id (integer), when a person made the change */
  userId?: number | undefined;
  /** id of the API key used, when one was */
  apiKeyId?: string | undefined;
  correlationId?: string | undefined;
  /** ISO time the command was decided */
  occurredAt: string;
}>;

export type EventToAppend<E extends Event = Event> = E &
  Readonly<{
    /** event id; client-supplied uuids make appends idempotent */
    id?: string;
    metadata: EventMetadata;
  }>;

/** An event and its position in the log: all a rebuild's bulk fold reads of a recorded event. */
export type PositionedEvent<E extends Event = Event> = E & Readonly<{ position: bigint }>;

export type RecordedEvent<E extends Event = Event> = E &
  Readonly<{
    id: string;
    streamName: string;
    /** 0-based revision within the stream */
    revision: bigint;
    /** position in the global log ($all); strictly increasing in commit order */
    position: bigint;
    metadata: EventMetadata;
    recordedAt: Date;
  }>;
