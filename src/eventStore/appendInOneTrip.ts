import pg from 'pg';
import type { AppendResult, StreamAppend } from './eventStore.ts';

/*
 * An append whose streams all expect `any` (capture's) as one query text, one round trip: BEGIN,
 * the append lock, the ids already in the log, the insert — revisions after each stream's head and
 * positions drawn as one range of the sequence, both computed by Postgres — the wake-up and
 * COMMIT. The lock is held only while Postgres runs the statements and syncs the commit; with
 * the three-request append it was also held across two client round trips, each waiting for the
 * server's busy main thread (docs/PERFORMANCE.md "One round trip for capture's appends").
 */

/** At most this many rows go as literals in one query text; larger appends go by COPY. */
export const ONE_TRIP_MAX_ROWS = 256;
/** …and at most this much JSON (Postgres parses the literals with the statement). */
export const ONE_TRIP_MAX_BYTES = 1 << 20;

export type Known = Map<string, { position: bigint; revision: bigint }>;

const literal = (v: string) => pg.escapeLiteral(v);

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Whether `appendInOneTrip` may take this batch: every stream expects `any`, and every id is
 * written as Postgres returns it (rows inserted are known by the ids Postgres answers with).
 */
export const takesOneTrip = (batch: readonly StreamAppend[], ids: readonly (readonly string[])[]) =>
  ids.reduce((n, l) => n + l.length, 0) <= ONE_TRIP_MAX_ROWS &&
  batch.every((b) => b.expectedRevision === 'any') &&
  ids.every((l) => l.every((id) => CANONICAL_UUID.test(id)));

/**
 * Appends `batch` (ids chosen by the caller, `ids[i][j]` for `batch[i].events[j]`) and returns
 * where every id is: appended now, or already in the log (a retry). Repeats of an id, in the log
 * or in the batch, are not appended again. Returns undefined, having sent nothing, when the JSON
 * is over `ONE_TRIP_MAX_BYTES`: the caller then appends by COPY.
 */
export async function appendInOneTrip(
  client: pg.PoolClient,
  lockKey: bigint,
  channel: string,
  batch: readonly StreamAppend[],
  ids: readonly (readonly string[])[],
): Promise<Known | undefined> {
  const values: string[] = [];
  const seen = new Set<string>();
  let bytes = 0;
  for (const [i, item] of batch.entries())
    for (const [j, e] of item.events.entries()) {
      const id = ids[i]![j]!;
      if (seen.has(id)) continue;
      seen.add(id);
      const data = JSON.stringify(e.data);
      const metadata = JSON.stringify(e.metadata);
      bytes += data.length + metadata.length;
      if (bytes > ONE_TRIP_MAX_BYTES) return undefined;
      values.push(
        `(${values.length + 1},${literal(id)}::uuid,${literal(item.streamName)},${literal(e.type)},${literal(data)}::json,${literal(metadata)}::json)`,
      );
    }
  if (values.length === 0) return new Map();
  const idList = `ARRAY[${[...seen].map(literal).join(',')}]::uuid[]`;
  // `fresh` is referenced several times and `drawn` calls volatile functions: both are computed
  // once. Ids already in the log are selected before the insert, under the lock.
  const text = [
    'BEGIN',
    `SELECT pg_advisory_xact_lock(${lockKey.toString()})`,
    `SELECT id, position, revision FROM event_log WHERE id = ANY(${idList})`,
    `WITH v(ord, id, stream_name, type, data, metadata) AS (VALUES ${values.join(',')}),
     fresh AS (SELECT * FROM v WHERE NOT EXISTS (SELECT 1 FROM event_log e WHERE e.id = v.id)),
     numbered AS (
       SELECT f.*, row_number() OVER (ORDER BY f.ord) AS k,
              row_number() OVER (PARTITION BY f.stream_name ORDER BY f.ord) AS nth
         FROM fresh f),
     heads AS (
       SELECT s.stream_name,
              coalesce((SELECT revision FROM event_log e WHERE e.stream_name = s.stream_name
                         ORDER BY revision DESC LIMIT 1), -1) AS head
         FROM (SELECT DISTINCT stream_name FROM fresh) AS s),
     drawn AS (
       SELECT setval(seq, nextval(seq) + (SELECT count(*) FROM fresh) - 1) AS last,
              (SELECT count(*) FROM fresh) AS n
         FROM (SELECT pg_get_serial_sequence('event_log', 'position')::regclass AS seq) AS s
        WHERE EXISTS (SELECT 1 FROM fresh))
     INSERT INTO event_log (position, id, stream_name, revision, type, data, metadata)
     SELECT d.last - d.n + x.k, x.id, x.stream_name, h.head + x.nth, x.type, x.data, x.metadata
       FROM numbered x JOIN heads h USING (stream_name) CROSS JOIN drawn d
      ORDER BY x.k
     RETURNING id, position, revision`,
    `SELECT pg_notify(${literal(channel)}, '')`,
    'COMMIT',
  ].join(';\n');
  const results = (await client.query(text)) as unknown as pg.QueryResult[];
  const known: Known = new Map();
  for (const r of [...results[2]!.rows, ...results[3]!.rows])
    known.set(r.id, { position: BigInt(r.position), revision: BigInt(r.revision) });
  return known;
}

/** Each stream append's result from where its ids are (`known`). */
export const appendResults = (
  batch: readonly StreamAppend[],
  ids: readonly (readonly string[])[],
  known: Known,
): AppendResult[] =>
  batch.map((item, i) => {
    const mine = ids[i]!.map((id) => known.get(id)!);
    const position = mine.reduce((a, k) => (k.position > a ? k.position : a), -1n);
    const revision = mine.reduce((a, k) => (k.revision > a ? k.revision : a), -1n);
    const appended = item.events.map((e, j) => ({ id: ids[i]![j]!, type: e.type, ...mine[j]! }));
    return { nextExpectedRevision: revision, position, appended };
  });
