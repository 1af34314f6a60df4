import type pg from 'pg';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { ClickHouse } from '../runtime/clickhouse.ts';
import { type ChProjection, chCheckpointId } from './clickhouseProjection.ts';
import { createClickHouseProjectionRunner } from './clickhouseProjectionRunner.ts';
import type { RebuildProgress } from './rebuildProjection.ts';

export class ProjectionBusyError extends Error {}

/**
 * Drops a ClickHouse read model and replays the log into it from position 0. ClickHouse has no
 * transaction to swap tables in, so this needs the projection to itself: it refuses while another
 * process (a running server) holds the projection's lock.
 */
export async function rebuildClickHouseProjection(
  store: EventStore,
  pool: pg.Pool,
  ch: ClickHouse,
  projection: ChProjection,
  options: { onProgress?: (p: RebuildProgress) => void; progressEveryMs?: number } = {},
): Promise<{ name: string; position: bigint }> {
  const id = chCheckpointId(projection);
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ ok: boolean }>(
      'SELECT pg_try_advisory_lock(hashtext($1)) AS ok',
      [id],
    );
    if (!rows[0]!.ok)
      throw new ProjectionBusyError(`another process runs ${id}; stop it before rebuilding`);
    for (const statement of projection.drop(ch.database))
      await ch.client.command({ query: statement });
    await client.query(
      `INSERT INTO projection_checkpoints (id, position) VALUES ($1, -1)
       ON CONFLICT (id) DO UPDATE SET position = -1, pending_from = NULL, pending_to = NULL, updated_at = now()`,
      [id],
    );
    // the replay parks again what still fails
    await client.query('DELETE FROM parked_events WHERE read_model = $1', [
      `clickhouse:${projection.name}`,
    ]);
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [id]);
  } finally {
    client.release();
  }
  const runner = createClickHouseProjectionRunner(store, pool, ch, projection);
  const name = `clickhouse:${projection.name}`;
  const head = await store.headPosition();
  await runner.start();
  const report = () => {
    const position = runner.status().position;
    options.onProgress?.({ name, position, head, events: 0 });
  };
  const ticker = options.onProgress
    ? setInterval(report, options.progressEveryMs ?? 500)
    : undefined;
  try {
    await runner.caughtUp();
  } finally {
    clearInterval(ticker);
  }
  report();
  const { position } = runner.status();
  await runner.stop();
  return { name, position };
}
