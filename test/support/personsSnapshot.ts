import type pg from 'pg';
import { expect } from 'vitest';

/** Every row of the persons read model's tables, in a stable order. */
export async function personsSnapshot(pool: pg.Pool) {
  const rows = async (sql: string) => (await pool.query(sql)).rows;
  return {
    persons: await rows(
      'SELECT id, project_id, uuid::text AS uuid, properties, is_identified, created_at, version FROM persons ORDER BY id',
    ),
    person_distinct_ids: await rows(
      'SELECT project_id, distinct_id, person_id FROM person_distinct_ids ORDER BY project_id, distinct_id COLLATE "C"',
    ),
    distinct_id_order: await rows(
      'SELECT person_id, array_agg(distinct_id ORDER BY ord) AS ids FROM person_distinct_ids GROUP BY person_id ORDER BY person_id',
    ),
    groups: await rows(
      'SELECT project_id, group_type_index, group_key, properties, created_at, version FROM groups ORDER BY project_id, group_type_index, group_key COLLATE "C"',
    ),
    group_type_mapping: await rows(
      'SELECT project_id, group_type, group_type_index FROM group_type_mapping ORDER BY project_id, group_type_index',
    ),
    person_ingestion_warnings: await rows(
      'SELECT id::text AS id, project_id, type, event_uuid, details, at FROM person_ingestion_warnings ORDER BY id',
    ),
    // time travel's index
    person_identities: await rows(
      'SELECT id, project_id, uuid::text AS uuid, distinct_id, position FROM person_identities ORDER BY id',
    ),
    person_links: await rows(
      'SELECT project_id, distinct_id, other_id FROM person_links ORDER BY project_id, distinct_id COLLATE "C", other_id COLLATE "C"',
    ),
  };
}

/** Row-by-row comparison that names the first differing row of each table. */
export function expectSameRows(
  before: Record<string, unknown[]>,
  after: Record<string, unknown[]>,
) {
  for (const table of Object.keys(before)) {
    const a = before[table]!;
    const b = after[table]!;
    const first = a.findIndex((row, i) => JSON.stringify(row) !== JSON.stringify(b[i]));
    expect({ table, row: first, live: a[first], rebuilt: b[first] }).toEqual({
      table,
      row: -1,
      live: undefined,
      rebuilt: undefined,
    });
    expect(b.length, `${table}: row count`).toBe(a.length);
  }
}
