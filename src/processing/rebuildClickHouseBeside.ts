import type pg from 'pg';
import type { RecordedEvent } from '../core/event.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { ClickHouse } from '../runtime/clickhouse.ts';
import { type ChProjection, chCheckpointId } from './clickhouseProjection.ts';
import type { ProjectionRunner } from './projectionRunner.ts';
import type { RebuildProgress } from './rebuildProjection.ts';

const PAGE = 50_000;
const INSERT_BLOCK = 5_000;

/**
 * Replays the log into a shadow copy of ClickHouse read models while the live ones keep serving,
 * then swaps them in: the shadow tables are filled up to the head seen at the start, the live
 * runner is stopped, the shadow catches up with what arrived meanwhile, `EXCHANGE TABLES` puts
 * each shadow table in place, the checkpoint moves to where the shadow ended and the runner starts
 * again from there. Queries see the old tables until the exchange and the rebuilt ones after;
 * only the last catch-up (seconds) delays read-your-writes.
 */
export async function rebuildClickHouseBeside(deps: {
  store: EventStore;
  pool: pg.Pool;
  ch: ClickHouse;
  projection: ChProjection;
  runner: ProjectionRunner;
  onProgress?: (p: RebuildProgress) => void;
}): Promise<{ name: string; position: bigint }> {
  const { store, pool, ch, projection, runner } = deps;
  const name = `clickhouse:${projection.name}`;
  const shadow: ClickHouse = { ...ch, database: `${ch.database}_rebuild_${projection.name}` };
  await ch.client.command({ query: `DROP DATABASE IF EXISTS ${shadow.database}` });
  await ch.client.command({ query: `CREATE DATABASE ${shadow.database}` });
  try {
    for (const statement of projection.ddl(shadow.database))
      await ch.client.command({ query: statement });
    let position = -1n;
    let head = await store.headPosition();
    /** Inserts pages up to `upTo`; the next page is read while the last is inserted. */
    const replay = async (upTo: bigint) => {
      const read = (after: bigint) =>
        store.readAll({
          after: after < 0n ? 'start' : after,
          maxCount: PAGE,
          filter: projection.filter,
        });
      let page: RecordedEvent[] = await read(position);
      for (;;) {
        const wanted = page.filter((e) => e.position <= upTo);
        const last = wanted[wanted.length - 1]?.position;
        const next =
          wanted.length === PAGE && last !== undefined && last < upTo ? read(last) : undefined;
        // Inserted in smaller blocks: embedded chDB runs one statement at a time, so the
        // server's own queries wait behind each block (50,000 rows: seconds; 5,000: a few 100 ms).
        for (let from = 0; from < wanted.length; from += INSERT_BLOCK) {
          const block = wanted.slice(from, from + INSERT_BLOCK);
          const to = block[block.length - 1]!.position;
          await projection.insert(shadow, block, `rebuild:${block[0]!.position}-${to}`);
          position = to;
        }
        deps.onProgress?.({ name, position: position < 0n ? upTo : position, head, events: 0 });
        if (!next) return;
        page = await next;
      }
    };
    await replay(head);
    await runner.stop();
    try {
      head = await store.headPosition();
      await replay(head);
      for (const table of projection.tables)
        await ch.client.command({
          query: `EXCHANGE TABLES ${ch.database}.${table} AND ${shadow.database}.${table}`,
        });
      // Every event up to the head is in the swapped-in tables (those of other types included:
      // they are not this read model's), so the live runner goes on from the head.
      await pool.query(
        `INSERT INTO projection_checkpoints (id, position) VALUES ($1, $2)
         ON CONFLICT (id) DO UPDATE SET position = $2, pending_from = NULL, pending_to = NULL, updated_at = now()`,
        [chCheckpointId(projection), head.toString()],
      );
    } finally {
      await runner.start();
    }
    return { name, position: head };
  } finally {
    await ch.client.command({ query: `DROP DATABASE IF EXISTS ${shadow.database}` });
  }
}

/**
 * Every ClickHouse read model, side by side, each beside its live runner; progress is reported
 * for the slowest, under one name.
 */
export async function rebuildClickHouseModelsBeside(deps: {
  store: EventStore;
  pool: pg.Pool;
  ch: ClickHouse;
  projections: readonly ChProjection[];
  runners: ReadonlyMap<string, ProjectionRunner>;
  onProgress?: (p: RebuildProgress) => void;
}): Promise<{ name: string; position: string }[]> {
  const positions = new Map<string, bigint>();
  const name = deps.projections.map((p) => `clickhouse:${p.name}`).join(' + ');
  const results = await Promise.all(
    deps.projections.map((projection) => {
      const runner = deps.runners.get(`clickhouse:${projection.name}`);
      if (!runner) throw new Error(`no runner for clickhouse:${projection.name}`);
      return rebuildClickHouseBeside({
        ...deps,
        projection,
        runner,
        onProgress: (r) => {
          positions.set(r.name, r.position);
          if (positions.size < deps.projections.length) return;
          const slowest = [...positions.values()].reduce((a, b) => (a < b ? a : b));
          deps.onProgress?.({ ...r, name, position: slowest });
        },
      });
    }),
  );
  return results.map((r) => ({ name: r.name, position: r.position.toString() }));
}
