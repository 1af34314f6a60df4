import type pg from 'pg';
import { uuidv5 } from '../../src/core/uuidv5.ts';
import {
  type GroupRow,
  PERSON_UUID_NAMESPACE,
  type PersonRow,
  type WorkingSet,
} from './personsFold.ts';

type Write = (tx: pg.PoolClient) => Promise<unknown>;

/**
 * What saves a working set, a write per group of tables no other write touches: `handle` runs them
 * in order in its transaction; a rebuild's bulk save runs them at once on connections of their own
 * (issue #11: the save of a 1,000,000-event fold was 9 s of one Postgres backend).
 */
/** A save's generation (see personsCache.ts): random, so no two saves write the same one. */
export const newGeneration = (): string =>
  String(1 + Math.floor(Math.random() * (Number.MAX_SAFE_INTEGER - 1)));

/**
 * `generation`: null writes none (several ingestion workers keep no cache). `counters`: the
 * `persons_counters` rows to write; by default the one sequence of ids and order stamps.
 */
export function writesOf(
  ws: WorkingSet,
  generation: string | null = newGeneration(),
  counters?: readonly (readonly [string, number])[],
): Write[] {
  const writes: Write[] = [];
  // persons
  writes.push(async (tx) => {
    if (ws.deletedPersons.size > 0)
      await tx.query('DELETE FROM persons WHERE id = ANY($1::int[])', [[...ws.deletedPersons]]);
    const persons = [...ws.dirtyPersons]
      .map((id) => ws.persons.get(id))
      .filter((p): p is PersonRow => p !== undefined);
    if (persons.length > 0) {
      await tx.query(
        `INSERT INTO persons (id, project_id, uuid, properties, is_identified, created_at, version)
         SELECT id, project_id, uuid, properties::jsonb, is_identified, created_at, version
           FROM json_to_recordset($1::json) AS x(id int, project_id int, uuid uuid, properties text, is_identified boolean, created_at timestamptz, version int)
         ON CONFLICT (id) DO UPDATE SET properties = EXCLUDED.properties, is_identified = EXCLUDED.is_identified,
           created_at = EXCLUDED.created_at, version = EXCLUDED.version`,
        [
          JSON.stringify(
            persons.map((p) => ({
              id: p.id,
              project_id: p.projectId,
              uuid: p.uuid,
              // As text cast to jsonb: json_to_recordset's own jsonb column cost Postgres 160–180
              // µs a 2.7 KB person against 100–140 (docs/PERFORMANCE.md "Issue #27, third part").
              properties: JSON.stringify(p.properties),
              is_identified: p.isIdentified,
              created_at: p.createdAt,
              version: p.version,
            })),
          ),
        ],
      );
    }
  });
  // distinct ids
  writes.push(async (tx) => {
    const removed: [number, string][] = [];
    const upserts: { p: number; d: string; person: number; ord: number }[] = [];
    for (const key of ws.dirtyMappings) {
      const sep = key.indexOf('|');
      const projectId = Number(key.slice(0, sep));
      const distinctId = key.slice(sep + 1);
      const personId = ws.mapping.get(key);
      if (personId === null || personId === undefined) removed.push([projectId, distinctId]);
      else {
        const ord = ws.mappingOrds.get(key);
        if (ord === undefined)
          throw new Error(`persons projection: mapping ${key} was attached without an order stamp`);
        upserts.push({ p: projectId, d: distinctId, person: personId, ord });
      }
    }
    if (removed.length > 0) {
      await tx.query(
        `DELETE FROM person_distinct_ids m USING unnest($1::int[], $2::text[]) AS k(p, d) WHERE m.project_id = k.p AND m.distinct_id = k.d`,
        [removed.map((r) => r[0]), removed.map((r) => r[1])],
      );
    }
    if (upserts.length > 0) {
      await tx.query(
        `INSERT INTO person_distinct_ids (project_id, distinct_id, person_id, ord)
         SELECT p, d, person, ord FROM json_to_recordset($1::json) AS x(p int, d text, person int, ord bigint)
         ON CONFLICT (project_id, distinct_id) DO UPDATE SET person_id = EXCLUDED.person_id, ord = EXCLUDED.ord`,
        [JSON.stringify(upserts)],
      );
    }
  });
  // group types and groups
  writes.push(async (tx) => {
    for (const t of ws.newGroupTypes) {
      await tx.query('INSERT INTO group_type_mapping VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
        t.projectId,
        t.groupType,
        t.index,
      ]);
    }
    const groups = [...ws.dirtyGroups]
      .map((k) => ws.groups.get(k))
      .filter((g): g is GroupRow => !!g);
    if (groups.length > 0) {
      await tx.query(
        `INSERT INTO groups SELECT project_id, group_type_index, group_key, properties::jsonb, created_at, version FROM json_to_recordset($1::json) AS x(project_id int, group_type_index int, group_key text, properties text, created_at timestamptz, version int)
         ON CONFLICT (project_id, group_type_index, group_key) DO UPDATE SET properties = EXCLUDED.properties, version = EXCLUDED.version`,
        [
          JSON.stringify(
            groups.map((g) => ({
              project_id: g.projectId,
              group_type_index: g.groupTypeIndex,
              group_key: g.groupKey,
              properties: JSON.stringify(g.properties),
              created_at: g.createdAt,
              version: g.version,
            })),
          ),
        ],
      );
    }
  });
  // ingestion warnings
  writes.push(async (tx) => {
    if (ws.warnings.length > 0) {
      await tx.query(
        `INSERT INTO person_ingestion_warnings SELECT * FROM json_to_recordset($1::json) AS x(id uuid, project_id int, type text, event_uuid text, details jsonb, at timestamptz) ON CONFLICT DO NOTHING`,
        [
          JSON.stringify(
            ws.warnings.map((w) => ({
              id: uuidv5(`${w.projectId}:${w.eventUuid}:${w.type}`, PERSON_UUID_NAMESPACE),
              project_id: w.projectId,
              type: w.type,
              event_uuid: w.eventUuid,
              details: w.details,
              at: w.at,
            })),
          ),
        ],
      );
    }
  });
  // identities
  writes.push(async (tx) => {
    if (ws.createdPersons.length > 0) {
      const c = ws.createdPersons;
      await tx.query(
        `INSERT INTO person_identities (id, project_id, uuid, distinct_id, position)
         SELECT * FROM unnest($1::int[], $2::int[], $3::uuid[], $4::text[], $5::bigint[])
         ON CONFLICT (id) DO NOTHING`,
        [
          c.map((x) => x.id),
          c.map((x) => x.projectId),
          c.map((x) => x.uuid),
          c.map((x) => x.distinctId),
          c.map((x) => x.position.toString()),
        ],
      );
    }
  });
  // links
  writes.push(async (tx) => {
    if (ws.links.length > 0) {
      const pairs = new Map<string, [number, string, string]>();
      for (const l of ws.links) {
        for (const [a, b] of [
          [l.distinctId, l.otherId],
          [l.otherId, l.distinctId],
        ] as const)
          pairs.set(JSON.stringify([l.projectId, a, b]), [l.projectId, a, b]);
      }
      const rows = [...pairs.values()];
      await tx.query(
        `INSERT INTO person_links (project_id, distinct_id, other_id)
         SELECT * FROM unnest($1::int[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING`,
        [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
      );
    }
  });
  // counters
  writes.push(async (tx) => {
    if (counters)
      await tx.query(
        `INSERT INTO persons_counters SELECT * FROM unnest($1::text[], $2::bigint[]) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`,
        [counters.map((c) => c[0]), counters.map((c) => c[1])],
      );
    else
      await tx.query(
        `INSERT INTO persons_counters VALUES ('person_id', $1), ('ord', $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value;`,
        [ws.nextPersonId, ws.nextOrd],
      );
    if (generation === null) return;
    // not a part of the read model (a rebuild has its own): which save the tables are from
    await tx.query(
      `INSERT INTO persons_generation (id, value) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET value = EXCLUDED.value`,
      [generation],
    );
  });
  return writes;
}

/** Saves a working set in order, inside the caller's transaction. */
export async function save(
  tx: pg.PoolClient,
  ws: WorkingSet,
  generation: string | null = newGeneration(),
  counters?: readonly (readonly [string, number])[],
): Promise<void> {
  for (const write of writesOf(ws, generation, counters)) await write(tx);
}
