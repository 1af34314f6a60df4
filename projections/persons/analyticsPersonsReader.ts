import type pg from 'pg';

/** One distinct id and the uuid of the person that holds it now (null: no person holds it). */
export type DistinctIdOwner = { distinctId: string; personUuid: string | null };

/** A person property's value per person, for a breakdown by person property. */
export type PersonPropertyValues = Readonly<{ uuids: string[]; values: string[] }>;

/** At most this many persons may hold a property a chart is broken down by. */
export const PERSON_BREAKDOWN_MAX_PERSONS = 100_000;

/**
 * What the ClickHouse analytics need from the persons read model: who holds which distinct id
 * (for `person_distinct_id`) and the persons' current property values (person breakdowns).
 */
export const analyticsPersonsReader = (pool: pg.Pool) => ({
  /**
   * Every distinct id of the persons that hold any of `asked` now, and the asked ones no person
   * holds (person null).
   */
  async distinctIdOwners(projectId: number, asked: readonly string[]): Promise<DistinctIdOwner[]> {
    const { rows } = await pool.query<{ distinct_id: string; uuid: string }>(
      `SELECT d.distinct_id, p.uuid::text AS uuid
         FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
        WHERE d.project_id = $1 AND d.person_id IN (
          SELECT person_id FROM person_distinct_ids WHERE project_id = $1 AND distinct_id = ANY($2::text[]))`,
      [projectId, [...asked]],
    );
    const held = new Set(rows.map((r) => r.distinct_id));
    return [
      ...rows.map((r) => ({ distinctId: r.distinct_id, personUuid: r.uuid })),
      ...asked.filter((id) => !held.has(id)).map((id) => ({ distinctId: id, personUuid: null })),
    ];
  },

  /**
   * The persons holding the top-level property `key` (JSON null counts as missing), with its
   * value as text the way event breakdowns show it: a string as is, any other JSON value as its
   * JSON text. Null when more than `PERSON_BREAKDOWN_MAX_PERSONS` persons hold it.
   */
  async propertyValues(projectId: number, key: string): Promise<PersonPropertyValues | null> {
    const { rows } = await pool.query<{ uuid: string; value: string }>(
      `SELECT uuid::text AS uuid,
              CASE jsonb_typeof(properties -> $2) WHEN 'string' THEN properties ->> $2
                   ELSE (properties -> $2)::text END AS value
         FROM persons
        WHERE project_id = $1 AND properties ? $2 AND jsonb_typeof(properties -> $2) <> 'null'
        ORDER BY uuid LIMIT $3`,
      [projectId, key, PERSON_BREAKDOWN_MAX_PERSONS + 1],
    );
    if (rows.length > PERSON_BREAKDOWN_MAX_PERSONS) return null;
    return { uuids: rows.map((r) => r.uuid), values: rows.map((r) => r.value) };
  },

  /**
   * Only the `keys` of each asked person's properties (a key the person lacks is left out): what
   * person property correlation reads, never whole property sets. Persons not found are left out.
   */
  async propertiesOfKeys(
    projectId: number,
    uuids: readonly string[],
    keys: readonly string[],
  ): Promise<{ uuid: string; properties: Record<string, unknown> }[]> {
    if (uuids.length === 0) return [];
    const { rows } = await pool.query<{ uuid: string; properties: Record<string, unknown> }>(
      `SELECT p.uuid::text AS uuid,
              COALESCE((SELECT jsonb_object_agg(k, p.properties -> k) FROM unnest($3::text[]) AS k
                         WHERE p.properties ? k), '{}'::jsonb) AS properties
         FROM persons p
        WHERE p.project_id = $1 AND p.uuid = ANY($2::uuid[])`,
      [projectId, uuids, keys],
    );
    return rows;
  },
});
