import type pg from 'pg';
import { checkpointId, readCheckpoint } from '../../src/processing/projection.ts';
import { personsProjection } from './personsProjection.ts';

/** One distinct id and the uuid of the person that holds it now (null: no person holds it). */
export type DistinctIdOwner = { distinctId: string; personUuid: string | null };

/**
 * `projectId` → distinct ids: every distinct id of the persons that hold any of them now, and
 * the asked ones no person holds. Waits until the persons projection has applied the log up to
 * `upToPosition` (throws while it is behind; the ClickHouse runner retries the batch).
 */
export type PersonMappingLookup = (
  wanted: ReadonlyMap<number, ReadonlySet<string>>,
  upToPosition: bigint,
) => Promise<Map<number, DistinctIdOwner[]>>;

export const personMappingLookup =
  (pool: pg.Pool): PersonMappingLookup =>
  async (wanted, upToPosition) => {
    for (let attempt = 0; ; attempt++) {
      if ((await readCheckpoint(pool, checkpointId(personsProjection))) >= upToPosition) break;
      if (attempt >= 100) throw new Error('waiting for the persons projection to merge persons');
      await new Promise((r) => setTimeout(r, 20));
    }
    const out = new Map<number, DistinctIdOwner[]>();
    for (const [projectId, ids] of wanted) {
      const asked = [...ids];
      const { rows } = await pool.query<{ distinct_id: string; uuid: string }>(
        `SELECT d.distinct_id, p.uuid::text AS uuid
           FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
          WHERE d.project_id = $1 AND d.person_id IN (
            SELECT person_id FROM person_distinct_ids WHERE project_id = $1 AND distinct_id = ANY($2::text[]))`,
        [projectId, asked],
      );
      const held = new Set(rows.map((r) => r.distinct_id));
      out.set(projectId, [
        ...rows.map((r) => ({ distinctId: r.distinct_id, personUuid: r.uuid })),
        ...asked.filter((id) => !held.has(id)).map((id) => ({ distinctId: id, personUuid: null })),
      ]);
    }
    return out;
  };
