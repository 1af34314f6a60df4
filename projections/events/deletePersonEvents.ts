import type { ClickHouse } from '../../src/runtime/clickhouse.ts';

/** One person's events to delete: those of its distinct ids at or below a log position. */
export type EventsToDelete = Readonly<{
  projectId: number;
  distinctIds: readonly string[];
  upToPosition: bigint;
}>;

/**
 * Removes the captured events of each (project, distinct id) at or below its entry's log position
 * (`_offset`), in one mutation. `ALTER TABLE … DELETE` rewrites the parts (the rows are gone from
 * disk, not just hidden); `mutations_sync=2` waits for it. Where an id is named twice, the higher
 * position wins.
 */
export async function deletePersonEvents(
  ch: ClickHouse,
  entries: readonly EventsToDelete[],
): Promise<void> {
  const limits = new Map<string, bigint>();
  for (const entry of entries) {
    for (const d of entry.distinctIds) {
      const key = `${entry.projectId}:${d}`;
      const current = limits.get(key);
      if (current === undefined || entry.upToPosition > current)
        limits.set(key, entry.upToPosition);
    }
  }
  if (limits.size === 0) return;
  await ch.client.command({
    query: `ALTER TABLE ${ch.database}.events DELETE
             WHERE team_id IN {teams:Array(Int64)} AND distinct_id IN {ids:Array(String)}
               AND indexOf({keys:Array(String)}, concat(toString(team_id), ':', distinct_id)) > 0
               AND _offset <= toUInt64(arrayElement({limits:Array(String)}, indexOf({keys:Array(String)}, concat(toString(team_id), ':', distinct_id))))`,
    query_params: {
      teams: [...new Set(entries.map((b) => b.projectId))],
      ids: [...new Set(entries.flatMap((b) => b.distinctIds))],
      keys: [...limits.keys()],
      limits: [...limits.values()].map(String),
    },
    clickhouse_settings: { mutations_sync: '2' },
  });
}
