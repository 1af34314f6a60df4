import type pg from 'pg';
import type { GroupTypesLookup } from '../events/eventsProjection.ts';

/**
 * Group type indexes from the persons read model, once the persons projection has applied the
 * log up to `upToPosition` (so a type first seen in this batch already has its index). While it
 * is behind, this throws and the events runner retries the batch with backoff.
 */
export const groupTypesLookup =
  (pool: pg.Pool): GroupTypesLookup =>
  async (projectIds, upToPosition) => {
    for (let attempt = 0; ; attempt++) {
      const { rows } = await pool.query<{ position: string }>("SELECT position FROM projection_checkpoints WHERE id = 'persons@1'");
      if (rows[0] && BigInt(rows[0].position) >= upToPosition) break;
      if (attempt >= 100) throw new Error('waiting for the persons projection to assign group types');
      await new Promise((r) => setTimeout(r, 20));
    }
    const { rows } = await pool.query<{ project_id: number; group_type: string; group_type_index: number }>(
      'SELECT project_id, group_type, group_type_index FROM group_type_mapping WHERE project_id = ANY($1::int[])',
      [projectIds],
    );
    const out = new Map<number, Map<string, number>>();
    for (const r of rows) {
      const m = out.get(r.project_id) ?? new Map<string, number>();
      m.set(r.group_type, r.group_type_index);
      out.set(r.project_id, m);
    }
    return out;
  };
