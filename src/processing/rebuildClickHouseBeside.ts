import type pg from 'pg';
import type { RecordedEvent } from '../core/event.ts';
import { withTransaction } from '../db/postgres.ts';
import type { AllFilter, EventStore } from '../eventStore/eventStore.ts';
import type { ClickHouse } from '../runtime/clickhouse.ts';
import { type ChProjection, chCheckpointId, createTables } from './clickhouseProjection.ts';
import { type LogInClickHouse, reachesLog, withLogChunk } from './logInClickHouse.ts';
import { recordParked } from './parkedEvents.ts';
import { applyOrPark } from './poisonEvents.ts';
import type { EventFilter } from './projection.ts';
import type { ProjectionRunner } from './projectionRunner.ts';
import type { RebuildProgress } from './rebuildProjection.ts';
import type { RebuiltModel } from './rebuildRequests.ts';

const PAGE = 50_000;
/**
 * Log positions per chunk when ClickHouse reads the log: each of its statements takes a fraction
 * of a second, so the server's own queries never wait long behind one.
 */
const CHUNK = 50_000n;

// Embedded chDB runs one statement at a time, so the server's own queries wait behind each insert
// (blocks of 50,000 rows: an events page's p99 4.7 s during a rebuild; 5,000: 1.4 s).
const INSERT_BLOCK = 5_000;
/** entries a read model gathers in memory (`bulk`, ≈ 100 B each) before it writes them */
const MAX_BULK_ENTRIES = 1_000_000;

type Parked = { event: RecordedEvent; error: unknown };

const matches = (filter: EventFilter, e: RecordedEvent) =>
  (!filter.eventTypes || filter.eventTypes.includes(e.type)) &&
  (!filter.streamPrefixes || filter.streamPrefixes.some((p) => e.streamName.startsWith(p)));

/** What any of the filters lets through: the log is read once for all the read models. */
function unionFilter(filters: readonly EventFilter[]): AllFilter {
  const union = (lists: (readonly string[] | undefined)[]) =>
    lists.every((l) => l !== undefined) ? [...new Set(lists.flat() as string[])] : undefined;
  const eventTypes = union(filters.map((f) => f.eventTypes));
  const streamPrefixes = union(filters.map((f) => f.streamPrefixes));
  return { ...(eventTypes ? { eventTypes } : {}), ...(streamPrefixes ? { streamPrefixes } : {}) };
}

/**
 * Replays the log into a shadow copy of the ClickHouse read models while the live ones keep
 * serving, then swaps them in: each projection's DDL runs in a database of its own
 * (`<db>_rebuild_<name>`), the log is read once, in pages, up to the head seen at the start and
 * each page inserted into every shadow; then the live runners stop, the shadows catch up with what
 * arrived meanwhile, `EXCHANGE TABLES` puts each shadow table in place, the checkpoints move to
 * the head and the runners start again from there. Queries see the old tables until the exchange;
 * only the last catch-up (seconds) delays read-your-writes. Progress is reported under one name.
 * An event a shadow refuses is parked as the live runner would; the parked events of each read
 * model are replaced by the replay's at the swap.
 */
export async function rebuildClickHouseModelsBeside(deps: {
  store: EventStore;
  pool: pg.Pool;
  ch: ClickHouse;
  projections: readonly ChProjection[];
  runners: ReadonlyMap<string, ProjectionRunner>;
  /** the log as ClickHouse reads it: with embedded chDB the bulk of the replay runs there, in SQL */
  log?: LogInClickHouse;
  onProgress?: (p: RebuildProgress) => void;
}): Promise<RebuiltModel[]> {
  const { store, pool, ch } = deps;
  const name = deps.projections.map((p) => `clickhouse:${p.name}`).join(' + ');
  const models = deps.projections.map((projection) => {
    const runner = deps.runners.get(`clickhouse:${projection.name}`);
    if (!runner) throw new Error(`no runner for clickhouse:${projection.name}`);
    const shadow: ClickHouse = { ...ch, database: `${ch.database}_rebuild_${projection.name}` };
    return { projection, runner, shadow, bulk: projection.bulk?.(), parked: [] as Parked[] };
  });
  /**
   * An insert into a shadow, as the live runner does it: a block that fails is split and the
   * event that fails alone parked (noted here, recorded when the shadow is swapped in).
   */
  const insertParking = (model: (typeof models)[number], events: RecordedEvent[]) =>
    applyOrPark(events, {
      apply: (part) => model.projection.insert(model.shadow, part, null),
      park: async (event, error) => void model.parked.push({ event, error }),
      attempts: 1,
      retryTransient: false,
      delay: async () => undefined,
    });
  const filter = unionFilter(deps.projections.map((p) => p.filter));
  const dropShadows = async () => {
    for (const m of models)
      await ch.client.command({ query: `DROP DATABASE IF EXISTS ${m.shadow.database}` });
  };
  await dropShadows();
  try {
    for (const { projection, shadow } of models) {
      await ch.client.command({ query: `CREATE DATABASE ${shadow.database}` });
      // without tableSettings: those tune merges under small live inserts, and a replay writes few
      // large ones (it measured slower with them); the runner sets them once the tables are swapped in
      for (const statement of projection.ddl(shadow.database))
        await ch.client.command({ query: statement });
    }
    let position = -1n;
    let head = await store.headPosition();
    const read = (after: bigint) =>
      store.readAll({ after: after < 0n ? 'start' : after, maxCount: PAGE, filter });
    /**
     * Inserts pages up to `upTo`. The next page is read while this one is inserted, and a block is
     * encoded and sent while chDB still writes the one before (one in flight): the main thread's
     * work and chDB's overlap. Shadow tables are dropped on failure, so no deduplication tokens.
     */
    const replay = async (upTo: bigint) => {
      let inFlight: { done: Promise<unknown>; last: bigint } | undefined;
      const settle = async () => {
        if (!inFlight) return;
        await inFlight.done;
        position = inFlight.last;
        inFlight = undefined;
        deps.onProgress?.({ name, position, head, events: 0 });
      };
      let page: RecordedEvent[] = await read(position);
      for (;;) {
        const wanted = page.filter((e) => e.position <= upTo);
        const last = wanted[wanted.length - 1]?.position;
        const next =
          wanted.length === PAGE && last !== undefined && last < upTo ? read(last) : undefined;
        for (let from = 0; from < wanted.length; from += INSERT_BLOCK) {
          const block = wanted.slice(from, from + INSERT_BLOCK);
          const done = Promise.all(
            models.map((model) => {
              const { projection, shadow, bulk } = model;
              const theirs = block.filter((e) => matches(projection.filter, e));
              if (theirs.length === 0) return undefined;
              if (!bulk) return insertParking(model, theirs);
              bulk.add(theirs);
              return bulk.size() > MAX_BULK_ENTRIES
                ? bulk.write(shadow, theirs[theirs.length - 1]!.position)
                : undefined;
            }),
          );
          // awaited by the next settle; a failure must not count as unhandled meanwhile
          done.catch(() => undefined);
          await settle();
          inFlight = { done, last: block[block.length - 1]!.position };
        }
        if (!next) break;
        page = await next;
      }
      await settle();
      for (const { shadow, bulk } of models) await bulk?.write(shadow, upTo);
      deps.onProgress?.({ name, position: upTo, head, events: 0 });
    };
    /**
     * The bulk up to `upTo` in ClickHouse: a chunk of the log at a time copied there, each read model
     * building its rows from it in SQL; the events SQL left to Node are read from the log and go
     * through `insert` / `bulk` as in `replay`.
     */
    const counts = models.map(() => ({ inClickHouse: 0, inNode: 0 }));
    const replayInClickHouse = async (log: LogInClickHouse, eventTypes: readonly string[]) => {
      const chunkDatabase = models[0]!.shadow.database;
      while (position < head) {
        const upTo = position + CHUNK < head ? position + CHUNK : head;
        const range = { after: position, upTo, eventTypes };
        await withLogChunk(ch, log, chunkDatabase, range, async (chunk) => {
          let events: Promise<RecordedEvent[]> | undefined;
          for (const [i, model] of models.entries()) {
            const { projection, shadow, bulk } = model;
            const left = new Set(await projection.fromLogChunk!(shadow, chunk, bulk));
            const theirs = [...chunk.types]
              .filter(([type]) => projection.filter.eventTypes?.includes(type) ?? true)
              .reduce((sum, [, t]) => sum + t.rows, 0);
            counts[i]!.inNode += left.size;
            counts[i]!.inClickHouse += theirs - left.size;
            if (left.size === 0) continue;
            events ??= store.readAll({
              after: position < 0n ? 'start' : position,
              before: upTo + 1n,
              filter,
            });
            const mine = (await events).filter((e) => left.has(e.position));
            if (bulk) bulk.add(mine);
            else await insertParking(model, mine);
          }
          for (const { shadow, bulk } of models)
            if (bulk && bulk.size() > MAX_BULK_ENTRIES) await bulk.write(shadow, upTo);
        });
        position = upTo;
        deps.onProgress?.({ name, position, head, events: 0 });
      }
      for (const { shadow, bulk } of models) await bulk?.write(shadow, head);
    };
    // Only embedded chDB reaches Postgres by the server's own URL (a ClickHouse server may not).
    const { eventTypes } = filter;
    const log =
      deps.log &&
      ch.embedded &&
      eventTypes &&
      !filter.streamPrefixes &&
      models.every((m) => m.projection.fromLogChunk) &&
      (await reachesLog(ch, deps.log))
        ? deps.log
        : undefined;
    if (log && eventTypes) await replayInClickHouse(log, eventTypes);
    else await replay(head);
    for (const m of models) await m.runner.stop();
    try {
      head = await store.headPosition();
      await replay(head);
      for (const { projection, shadow, parked } of models) {
        // a data dir no runner has started on yet (a `log import`, then `rebuild`) has no live tables
        await createTables(ch, projection, ch.database);
        for (const table of projection.tables)
          await ch.client.command({
            query: `EXCHANGE TABLES ${ch.database}.${table} AND ${shadow.database}.${table}`,
          });
        // Every event up to the head is in the swapped-in tables (those of other types included:
        // they are not this read model's), so the live runner goes on from the head.
        // with the events the replay parked in place of the live runner's
        await withTransaction(pool, async (tx) => {
          await tx.query(
            `INSERT INTO projection_checkpoints (id, position) VALUES ($1, $2)
             ON CONFLICT (id) DO UPDATE SET position = $2, pending_from = NULL, pending_to = NULL, updated_at = now()`,
            [chCheckpointId(projection), head.toString()],
          );
          const readModel = `clickhouse:${projection.name}`;
          await tx.query('DELETE FROM parked_events WHERE read_model = $1', [readModel]);
          for (const { event, error } of parked) await recordParked(tx, readModel, event, error, 1);
        });
      }
    } finally {
      for (const m of models) await m.runner.start();
    }
    return models.map((m, i) => ({
      name: `clickhouse:${m.projection.name}`,
      position: head.toString(),
      ...(log ? { replayed: counts[i]! } : {}),
    }));
  } finally {
    await dropShadows();
  }
}
