import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type {
  Event,
  EventMetadata,
  EventToAppend,
  PositionedEvent,
  RecordedEvent,
} from '../core/event.ts';
import { escapesUnstorable, parseStorableJson } from '../core/storable.ts';
import { withClientTransaction } from '../db/postgres.ts';
import { type AppendNotifier, createAppendNotifier } from './appendNotifier.ts';
import { beginAppend, commitAppend } from './appendStatements.ts';
import { CopyRows, copyInto } from './copyRows.ts';
import {
  type AllFilter,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type ReadAllOptions,
  type ReadStreamOptions,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
  WrongExpectedRevisionError,
} from './eventStore.ts';
import { createLiveTail } from './liveTail.ts';

// The log's tables are created and changed by versioned migrations (eventLogMigrations.ts); the
// first one's DDL is exported for tests that build a bare log.
export { eventLogSchema } from './migrations/0001_event-log.ts';

/**
 * Every append takes this transaction-scoped advisory lock before it draws positions, so positions
 * are handed out in commit order: a reader that has seen position N can never later find a
 * committed event below N (the sequence-gap problem). Postgres makes a commit visible before it
 * releases the transaction's locks, so the next appender always draws after a visible commit.
 */
const APPEND_LOCK_KEY = 0x6576_656e_746c_6f67n; // "eventlog"
export const NOTIFY_CHANNEL = 'event_log_appended';
const LIVE_READ_INTERVAL_MS = 5;
const LOG_COLUMNS = ['position', 'id', 'stream_name', 'revision', 'type', 'data', 'metadata'];
/** Up to this many event types a read merges per-type index scans; past it, one filtered scan. */
const MAX_MERGED_TYPES = 32;

type Row = {
  position: string;
  id: string;
  stream_name: string;
  revision: string;
  type: string;
  data: object;
  metadata: EventMetadata;
  recorded_ms: number;
};

/**
 * The log's `json` columns as they are read: storable (src/core/storable.ts). The column keeps what
 * an older release appended, NUL and lone surrogates included, and every read model's store
 * refuses those: a projection, a rebuild and a handler's fold all see U+FFFD instead, as capture
 * and the API write it now. A clean text costs one regex scan beside its JSON.parse.
 */
const JSON_OID = 114;
const LOG_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === JSON_OID && format !== 'binary'
      ? parseStorableJson
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

const toRecorded = (r: Row): RecordedEvent => ({
  id: r.id,
  streamName: r.stream_name,
  revision: BigInt(r.revision),
  position: BigInt(r.position),
  type: r.type,
  data: r.data,
  metadata: r.metadata,
  recordedAt: new Date(r.recorded_ms),
});

// The time as epoch milliseconds: a float is parsed far quicker than timestamptz text (whose
// parser took 7 % of a persons rebuild), and a Date holds milliseconds either way.
const COLUMNS =
  'position, id, stream_name, revision, type, data, metadata, (extract(epoch FROM recorded_at) * 1000)::float8 AS recorded_ms';

/**
 * Projections filter by event type (indexed); stream prefixes are matched on the rows that remain.
 * Every index on the log costs each of the many capture appends, so there is no prefix index.
 */
function filterSql(filter: AllFilter | undefined, params: unknown[]): string {
  const clauses: string[] = [];
  const prefixes = filter?.streamPrefixes ?? [];
  if (prefixes.length > 0) {
    params.push(prefixes);
    clauses.push(
      `EXISTS (SELECT 1 FROM unnest($${params.length}::text[]) AS p WHERE starts_with(stream_name, p))`,
    );
  }
  if (filter?.eventTypes?.length === 1) {
    // Equality, not ANY: the planner then walks the (type, position) index in order
    params.push(filter.eventTypes[0]);
    clauses.push(`type = $${params.length}`);
  } else if (filter?.eventTypes && filter.eventTypes.length > 0) {
    params.push(filter.eventTypes);
    clauses.push(`type = ANY($${params.length}::text[])`);
  }
  return clauses.map((c) => ` AND ${c}`).join('');
}

export function createPostgresEventStore(
  pool: pg.Pool,
  options: { liveTail?: { capacity?: number; fetch?: number } } = {},
): EventStore & { notifier: AppendNotifier } {
  const notifier = createAppendNotifier(pool, NOTIFY_CHANNEL, 1000, (payload) => {
    try {
      return tail.announce(BigInt(payload ?? ''));
    } catch {
      return true; // not a position: wake, as before positions were announced
    }
  });

  /**
   * All streams of a batch in one transaction of three requests: begin (lock, heads, known ids,
   * positions), COPY, commit.
   */
  async function appendMany(batch: readonly StreamAppend[]): Promise<AppendResult[]> {
    if (batch.length === 0) return [];
    const names = [...new Set(batch.map((b) => b.streamName))];
    // Client-chosen ids make retries idempotent: events already in the log are not appended again.
    const ids = batch.map((b) => b.events.map((e) => e.id ?? randomUUID()));
    const allIds = ids.flat();
    return withClientTransaction(pool, async (client) => {
      const started = await beginAppend(client, APPEND_LOCK_KEY, names, allIds);
      const head = new Map<string, bigint | 'no_stream'>(
        started.heads.map((r) => [r.name, r.revision === null ? 'no_stream' : BigInt(r.revision)]),
      );
      const known = new Map(
        started.existing.map((r) => [
          r.id,
          { position: BigInt(r.position), revision: BigInt(r.revision) },
        ]),
      );

      const rows: { id: string; s: string; r: bigint; t: string; d: object; m: object }[] = [];
      let last: bigint | undefined;
      for (const [i, item] of batch.entries()) {
        const seenHere = new Set<string>();
        const fresh = item.events
          .map((e, j) => ({ e, id: ids[i]![j]! }))
          .filter(
            ({ id }) => !known.has(id) && !seenHere.has(id) && seenHere.add(id) !== undefined,
          );
        const current = head.get(item.streamName)!;
        if (fresh.length === 0) continue;
        const expected = item.expectedRevision;
        const ok =
          expected === 'any' ||
          (expected === 'no_stream' && current === 'no_stream') ||
          (expected === 'stream_exists' && current !== 'no_stream') ||
          (typeof expected === 'bigint' && current === expected);
        if (!ok) throw new WrongExpectedRevisionError(item.streamName, expected, current);
        let next = current === 'no_stream' ? 0n : current + 1n;
        for (const { e, id } of fresh) {
          known.set(id, { position: -1n, revision: next }); // also dedupes repeats inside this batch
          rows.push({ id, s: item.streamName, r: next++, t: e.type, d: e.data, m: e.metadata });
        }
        head.set(item.streamName, next - 1n);
      }

      const recorded: RecordedEvent[] = [];
      if (rows.length > 0) {
        // The range drawn with the lock: the fresh rows take its first positions, in order.
        const first = started.firstDrawn!;
        last = first + BigInt(rows.length) - 1n;
        // the row's own time is Postgres' clock at the insert; subscribers of this process get
        // this one (it only ages their lag figures)
        const recordedAt = new Date();
        const lines = new CopyRows(rows.length * 4096);
        for (const [k, row] of rows.entries()) {
          const position = first + BigInt(k);
          known.get(row.id)!.position = position;
          const data = JSON.stringify(row.d);
          const metadata = JSON.stringify(row.m);
          lines.row([position.toString(), row.id, row.s, row.r.toString(), row.t, data, metadata]);
          recorded.push({
            id: row.id,
            streamName: row.s,
            revision: row.r,
            position,
            type: row.t,
            // as a read of the log would return them (src/core/storable.ts)
            data: escapesUnstorable(data) ? (parseStorableJson(data) as object) : row.d,
            metadata: escapesUnstorable(metadata)
              ? (parseStorableJson(metadata) as EventMetadata)
              : (row.m as EventMetadata),
            recordedAt,
          });
        }
        await copyInto(client, 'event_log', LOG_COLUMNS, lines);
      }
      await commitAppend(client, NOTIFY_CHANNEL, last);
      if (started.firstDrawn !== undefined)
        tail.publish({
          previousDrawn: started.firstDrawn - 1n,
          lastDrawn: started.firstDrawn + BigInt(allIds.length) - 1n,
          events: recorded,
        });
      const results = batch.map((item, i) => {
        const mine = ids[i]!.map((id) => known.get(id)!);
        const position = mine.reduce((a, k) => (k.position > a ? k.position : a), -1n);
        const revision = mine.reduce((a, k) => (k.revision > a ? k.revision : a), -1n);
        const appended = item.events.map((e, j) => ({
          id: ids[i]![j]!,
          type: e.type,
          ...mine[j]!,
        }));
        return { nextExpectedRevision: revision, position, appended };
      });
      notifier.wake();
      return results;
    });
  }

  async function appendToStream<E extends Event>(
    streamName: string,
    events: readonly EventToAppend<E>[],
    options: { expectedRevision: ExpectedRevision },
  ): Promise<AppendResult> {
    const [result] = await appendMany([
      { streamName, events, expectedRevision: options.expectedRevision },
    ]);
    return result!;
  }

  async function readStream<E extends Event = Event>(
    streamName: string,
    options: ReadStreamOptions = {},
  ): Promise<RecordedEvent<E>[]> {
    const backwards = options.direction === 'backwards';
    const params: unknown[] = [streamName];
    let where = 'stream_name = $1';
    if (options.fromRevision !== undefined) {
      params.push(options.fromRevision.toString());
      where += backwards ? ` AND revision <= $2` : ` AND revision >= $2`;
    }
    params.push(options.maxCount ?? null);
    const { rows } = await pool.query<Row>({
      text: `SELECT ${COLUMNS} FROM event_log WHERE ${where}
       ORDER BY revision ${backwards ? 'DESC' : 'ASC'} LIMIT $${params.length}`,
      values: params,
      types: LOG_TYPES,
    });
    return rows.map(toRecorded) as RecordedEvent<E>[];
  }

  async function readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return (await selectAll<Row>(COLUMNS, options)).map(toRecorded);
  }

  /**
   * Three columns, as arrays, `data` as text parsed here: a persons rebuild read 350,000 events in
   * 10.8 s of Node CPU this way against 16–17 s through `readAll` (issue #11).
   */
  async function readPositioned(options: ReadAllOptions = {}): Promise<PositionedEvent[]> {
    const rows = await selectAll<[string, string, string]>(
      'position, type, data::text AS data',
      options,
      'array',
    );
    return rows.map(([position, type, data]) => ({
      type,
      data: parseStorableJson(data) as object,
      position: BigInt(position),
    }));
  }

  /** The rows `readAll` selects, with `columns`. */
  async function selectAll<R>(
    columns: string,
    options: ReadAllOptions,
    rowMode?: 'array',
  ): Promise<R[]> {
    const run = async (text: string, values: unknown[]) =>
      (
        await pool.query<R & pg.QueryResultRow>({
          text,
          values,
          types: LOG_TYPES,
          ...(rowMode ? { rowMode } : {}),
        })
      ).rows;
    const backwards = options.direction === 'backwards';
    const params: unknown[] = [];
    let where = 'TRUE';
    if (options.after !== undefined && options.after !== 'start') {
      params.push(options.after.toString());
      where += ` AND position > $${params.length}`;
    }
    if (options.before !== undefined && options.before !== 'end') {
      params.push(options.before.toString());
      where += ` AND position < $${params.length}`;
    }
    const types = options.filter?.eventTypes ?? [];
    const order = `ORDER BY position ${backwards ? 'DESC' : 'ASC'}`;
    if (types.length < 2 || types.length > MAX_MERGED_TYPES) {
      where += filterSql(options.filter, params);
      params.push(options.maxCount ?? null);
      return run(
        `SELECT ${columns} FROM event_log WHERE ${where} ${order} LIMIT $${params.length}`,
        params,
      );
    }
    // Several types: one ordered index scan per type, merged (Merge Append). With `type = ANY(…)`
    // Postgres reads every matching row after the position and sorts them for each page, which
    // made a replay quadratic (81 ms a page at position 100,000 of 200,000, against 5 ms).
    where += filterSql({ ...options.filter, eventTypes: [] }, params);
    params.push(options.maxCount ?? null);
    const limit = `$${params.length}`;
    const branches = types.map((t) => {
      params.push(t);
      return `(SELECT ${columns} FROM event_log WHERE ${where} AND type = $${params.length} ${order} LIMIT ${limit})`;
    });
    return run(
      `SELECT * FROM (${branches.join(' UNION ALL ')}) AS merged ${order} LIMIT ${limit}`,
      params,
    );
  }

  async function headPosition(): Promise<bigint> {
    const { rows } = await pool.query<{ p: string | null }>(
      'SELECT max(position) AS p FROM event_log',
    );
    return rows[0]?.p == null ? -1n : BigInt(rows[0].p);
  }

  const tail = createLiveTail(readAll, headPosition, options.liveTail);

  /**
   * Catch-up then live, a page at a time: each page (up to 1,000 events, from the shared tail or the
   * log) is handed over whole, so a projection gets its events as a batch with their positions.
   */
  function subscribeToAllInBatches(
    handler: (events: readonly RecordedEvent[]) => Promise<void> | void,
    options: SubscribeOptions = {},
  ): Subscription {
    let stopped = false;
    let after: bigint =
      options.after === undefined || options.after === 'start' ? -1n : options.after;
    let caughtUp = false;
    const loop = (async () => {
      while (!stopped) {
        try {
          const waiter = notifier.nextWake();
          const { events: batch, scannedTo } = await tail.read(after, 1000, options.filter);
          if (batch.length > 0) {
            if (stopped) return;
            await handler(batch);
            after = batch[batch.length - 1]!.position;
          }
          if (!stopped && scannedTo > after) after = scannedTo;
          if (batch.length < 1000) {
            if (!caughtUp) {
              caughtUp = true;
              options.onCaughtUp?.();
            }
            await waiter;
            // Under a stream of small appends every one would wake every subscription into its own
            // query; a short pause lets a few appends share one read (latency cost: at most this).
            if (!stopped) await new Promise((r) => setTimeout(r, LIVE_READ_INTERVAL_MS));
          }
        } catch (error) {
          if (stopped) return;
          caughtUp = false; // report catching up again once the log is readable
          options.onError?.(error);
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        notifier.wake();
        await loop;
      },
    };
  }

  function subscribeToAll(
    handler: (event: RecordedEvent) => Promise<void> | void,
    options: SubscribeOptions = {},
  ): Subscription {
    // one event at a time; a failing handler resumes at the event it failed on
    let done = -1n;
    return subscribeToAllInBatches(async (batch) => {
      for (const event of batch) {
        if (event.position <= done) continue;
        await handler(event);
        done = event.position;
      }
    }, options);
  }

  return {
    notifier,
    subscribeToAllInBatches,
    appendToStream,
    appendMany,
    readStream,
    readAll,
    readPositioned,
    headPosition,
    subscribeToAll,
    close: () => notifier.close(),
  };
}
