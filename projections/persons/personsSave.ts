import type pg from 'pg';
import { uuidv5 } from '../../src/core/uuidv5.ts';
import { copyRows } from '../../src/db/copyRows.ts';
import {
  type GroupRow,
  PERSON_UUID_NAMESPACE,
  type PersonRow,
  type WorkingSet,
} from './personsFold.ts';

/** The persons a working set changed and still holds (deleted ones are gone from `persons`). */
const changedPersons = (ws: WorkingSet): PersonRow[] =>
  [...ws.dirtyPersons].map((id) => ws.persons.get(id)).filter((p): p is PersonRow => !!p);

/** The distinct ids a working set moved: to a person (with their order stamp), or to none. */
function changedMappings(ws: WorkingSet) {
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
  return { removed, upserts };
}

/** Each link both ways round, once. */
function linkRows(ws: WorkingSet): [number, string, string][] {
  const pairs = new Map<string, [number, string, string]>();
  for (const l of ws.links) {
    for (const [a, b] of [
      [l.distinctId, l.otherId],
      [l.otherId, l.distinctId],
    ] as const)
      pairs.set(JSON.stringify([l.projectId, a, b]), [l.projectId, a, b]);
  }
  return [...pairs.values()];
}

/** What both saves write the same way: group types, groups, warnings and the counters. */
async function saveTheRest(tx: pg.PoolClient, ws: WorkingSet): Promise<void> {
  for (const t of ws.newGroupTypes) {
    await tx.query('INSERT INTO group_type_mapping VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
      t.projectId,
      t.groupType,
      t.index,
    ]);
  }
  const groups = [...ws.dirtyGroups].map((k) => ws.groups.get(k)).filter((g): g is GroupRow => !!g);
  if (groups.length > 0) {
    await tx.query(
      `INSERT INTO groups SELECT * FROM json_to_recordset($1::json) AS x(project_id int, group_type_index int, group_key text, properties jsonb, created_at timestamptz, version int)
       ON CONFLICT (project_id, group_type_index, group_key) DO UPDATE SET properties = EXCLUDED.properties, version = EXCLUDED.version`,
      [
        JSON.stringify(
          groups.map((g) => ({
            project_id: g.projectId,
            group_type_index: g.groupTypeIndex,
            group_key: g.groupKey,
            properties: g.properties,
            created_at: g.createdAt,
            version: g.version,
          })),
        ),
      ],
    );
  }
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
  await tx.query(
    `INSERT INTO persons_counters VALUES ('person_id', $1), ('ord', $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`,
    [ws.nextPersonId, ws.nextOrd],
  );
}

/** Writes what a batch changed into the live tables: deletes, then upserts. */
export async function save(tx: pg.PoolClient, ws: WorkingSet): Promise<void> {
  if (ws.deletedPersons.size > 0)
    await tx.query('DELETE FROM persons WHERE id = ANY($1::int[])', [[...ws.deletedPersons]]);
  const persons = changedPersons(ws);
  if (persons.length > 0) {
    await tx.query(
      `INSERT INTO persons (id, project_id, uuid, properties, is_identified, created_at, version)
       SELECT id, project_id, uuid, properties, is_identified, created_at, version
         FROM json_to_recordset($1::json) AS x(id int, project_id int, uuid uuid, properties jsonb, is_identified boolean, created_at timestamptz, version int)
       ON CONFLICT (id) DO UPDATE SET properties = EXCLUDED.properties, is_identified = EXCLUDED.is_identified,
         created_at = EXCLUDED.created_at, version = EXCLUDED.version`,
      [
        JSON.stringify(
          persons.map((p) => ({
            id: p.id,
            project_id: p.projectId,
            uuid: p.uuid,
            properties: p.properties,
            is_identified: p.isIdentified,
            created_at: p.createdAt,
            version: p.version,
          })),
        ),
      ],
    );
  }
  const { removed, upserts } = changedMappings(ws);
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
  await saveTheRest(tx, ws);
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
  const links = linkRows(ws);
  if (links.length > 0) {
    await tx.query(
      `INSERT INTO person_links (project_id, distinct_id, other_id)
       SELECT * FROM unnest($1::int[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING`,
      [links.map((r) => r[0]), links.map((r) => r[1]), links.map((r) => r[2])],
    );
  }
}

/**
 * Writes a whole fold into empty tables (a rebuild's shadow schema): nothing to delete or
 * conflict with, so the large tables are streamed in with COPY (issue #11: at 1,000,000 events
 * the upserts of persons, distinct ids, identities and links took 8.3 s).
 */
export async function saveFresh(tx: pg.PoolClient, ws: WorkingSet): Promise<void> {
  await copyRows(
    tx,
    'persons',
    ['id', 'project_id', 'uuid', 'properties', 'is_identified', 'created_at', 'version'],
    changedPersons(ws).map((p) => [
      p.id,
      p.projectId,
      p.uuid,
      p.properties,
      p.isIdentified,
      p.createdAt,
      p.version,
    ]),
  );
  await copyRows(
    tx,
    'person_distinct_ids',
    ['project_id', 'distinct_id', 'person_id', 'ord'],
    changedMappings(ws).upserts.map((m) => [m.p, m.d, m.person, m.ord]),
  );
  await saveTheRest(tx, ws);
  await copyRows(
    tx,
    'person_identities',
    ['id', 'project_id', 'uuid', 'distinct_id', 'position'],
    ws.createdPersons.map((c) => [c.id, c.projectId, c.uuid, c.distinctId, c.position]),
  );
  await copyRows(tx, 'person_links', ['project_id', 'distinct_id', 'other_id'], linkRows(ws));
}
