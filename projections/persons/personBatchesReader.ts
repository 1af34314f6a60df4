import type pg from 'pg';
import type { PersonRecord } from '../../commands/persons/model/personView.ts';

export type PersonForEvaluation = {
  id: number;
  uuid: string;
  /** the person's first distinct id (by attachment order): what flags hash for it */
  distinct_id: string | null;
  properties: Record<string, unknown>;
};

/** Every person of a project in id order, a batch at a time (bulk flag evaluation). */
export const personBatchesReader = (pool: pg.Pool) => ({
  async after(projectId: number, afterId: number, limit: number): Promise<PersonForEvaluation[]> {
    const { rows } = await pool.query<PersonForEvaluation>(
      `SELECT p.id, p.uuid::text AS uuid, p.properties,
              (SELECT m.distinct_id FROM person_distinct_ids m
                WHERE m.person_id = p.id ORDER BY m.ord LIMIT 1) AS distinct_id
         FROM persons p
        WHERE p.project_id = $1 AND p.id > $2
        ORDER BY p.id LIMIT $3`,
      [projectId, afterId, limit],
    );
    return rows;
  },

  /** The persons with these uuids (analytics actors), in no particular order; unknown ones left out. */
  async byUuids(projectId: number, uuids: readonly string[]): Promise<PersonRecord[]> {
    if (uuids.length === 0) return [];
    const { rows } = await pool.query<PersonRecord>(
      `SELECT p.id, p.uuid::text AS uuid, p.properties, p.is_identified, p.created_at,
              array(SELECT m.distinct_id FROM person_distinct_ids m
                     WHERE m.person_id = p.id ORDER BY m.ord) AS distinct_ids
         FROM persons p
        WHERE p.project_id = $1 AND p.uuid = ANY($2::uuid[])`,
      [projectId, uuids],
    );
    return rows;
  },

  /** The uuids of the persons holding these distinct ids (each person once); unknown ids left out. */
  async uuidsForDistinctIds(projectId: number, distinctIds: readonly string[]): Promise<string[]> {
    if (distinctIds.length === 0) return [];
    const { rows } = await pool.query<{ uuid: string }>(
      `SELECT DISTINCT p.uuid::text AS uuid
         FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
        WHERE d.project_id = $1 AND d.distinct_id = ANY($2::text[])`,
      [projectId, distinctIds],
    );
    return rows.map((r) => r.uuid);
  },
});
