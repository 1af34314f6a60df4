import type pg from 'pg';
import type { EventCapturedData } from '../../commands/capture/model/eventCaptured.ts';
import { personEventTypes } from '../../commands/persons/model/personEvents.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import { pgProjection } from '../../src/processing/projection.ts';
import { type PersonsCache, personsCacheFor } from './personsCache.ts';
import {
  applyToWorkingSet,
  emptyWorkingSet,
  groupKeyOf,
  holdPerson,
  keysOf,
  mappingKey,
  type PersonRow,
  type PersonsFoldEvent,
  personUuidFor,
  type WorkingSet,
} from './personsFold.ts';
import { lockDistinctIds, lockGroups } from './personsLocks.ts';
import { assertBuiltWith } from './personsPartitions.ts';
import { newGeneration, save, writesOf } from './personsSave.ts';

const schema = `
  CREATE TABLE IF NOT EXISTS persons (
    id integer PRIMARY KEY, project_id integer NOT NULL, uuid uuid NOT NULL, properties jsonb NOT NULL,
    is_identified boolean NOT NULL, created_at timestamptz NOT NULL, version integer NOT NULL);
  CREATE INDEX IF NOT EXISTS persons_project_created ON persons (project_id, created_at DESC, id DESC);
  -- Every lookup by uuid names the project too. With (uuid) alone, the planner, whose statistics lag
  -- behind a table that grows by thousands of rows a second, AND-ed it with persons_project_created
  -- and read the project's whole index for each uuid (130 ms a batch of 200 ids at 5,000 persons).
  DROP INDEX IF EXISTS persons_uuid;
  CREATE INDEX IF NOT EXISTS persons_project_uuid ON persons (project_id, uuid);
  CREATE TABLE IF NOT EXISTS person_distinct_ids (
    project_id integer NOT NULL, distinct_id text NOT NULL, person_id integer NOT NULL, ord bigint NOT NULL,
    PRIMARY KEY (project_id, distinct_id));
  CREATE INDEX IF NOT EXISTS person_distinct_ids_person ON person_distinct_ids (person_id, ord);
  CREATE TABLE IF NOT EXISTS group_type_mapping (
    project_id integer NOT NULL, group_type text NOT NULL, group_type_index integer NOT NULL,
    PRIMARY KEY (project_id, group_type), UNIQUE (project_id, group_type_index));
  CREATE TABLE IF NOT EXISTS groups (
    project_id integer NOT NULL, group_type_index integer NOT NULL, group_key text NOT NULL, properties jsonb NOT NULL,
    created_at timestamptz NOT NULL, version integer NOT NULL, PRIMARY KEY (project_id, group_type_index, group_key));
  CREATE TABLE IF NOT EXISTS person_ingestion_warnings (
    id uuid PRIMARY KEY, project_id integer NOT NULL, type text NOT NULL, event_uuid text, details jsonb NOT NULL, at timestamptz NOT NULL);
  CREATE TABLE IF NOT EXISTS persons_counters (name text PRIMARY KEY, value bigint NOT NULL);
  -- The last save's generation (personsCache.ts): not one of the read model's tables.
  CREATE TABLE IF NOT EXISTS persons_generation (id integer PRIMARY KEY, value bigint NOT NULL);
  -- Time travel's index (queries/personTimeTravel/README.md). Every person ever created, merged away
  -- or deleted since included: its integer id and uuid, the distinct id it was created for and the
  -- log position of the event that created it.
  CREATE TABLE IF NOT EXISTS person_identities (
    id integer PRIMARY KEY, project_id integer NOT NULL, uuid uuid NOT NULL, distinct_id text NOT NULL, position bigint NOT NULL);
  CREATE INDEX IF NOT EXISTS person_identities_uuid ON person_identities (project_id, uuid, id);
  CREATE INDEX IF NOT EXISTS person_identities_distinct_id ON person_identities (project_id, distinct_id);
  -- Pairs of distinct ids whose persons one event read together (a merge asked for, done or
  -- refused), both ways round: the only links between the persons of different distinct ids.
  CREATE TABLE IF NOT EXISTS person_links (
    project_id integer NOT NULL, distinct_id text NOT NULL, other_id text NOT NULL,
    PRIMARY KEY (project_id, distinct_id, other_id));
`;

type LoadedPerson = {
  id: number;
  project_id: number;
  uuid: string;
  properties: Record<string, unknown>;
  is_identified: boolean;
  created_at: Date;
  version: number;
  distinct_ids: string[];
};
const withIds = `SELECT p.*, (SELECT array_agg(d.distinct_id ORDER BY d.ord) FROM person_distinct_ids d WHERE d.person_id = p.id) AS distinct_ids FROM persons p`;

/** The persons of these distinct ids, with all their ids, leaving out those already held. */
async function readPersons(
  tx: pg.PoolClient,
  keys: readonly [number, string][],
  held: ReadonlyMap<number, PersonRow>,
): Promise<LoadedPerson[]> {
  const { rows: mapped } = await tx.query<{ person_id: number }>(
    `SELECT m.person_id FROM person_distinct_ids m
       JOIN unnest($1::int[], $2::text[]) AS k(p, d) ON m.project_id = k.p AND m.distinct_id = k.d`,
    [keys.map((x) => x[0]), keys.map((x) => x[1])],
  );
  const personIds = [...new Set(mapped.map((m) => m.person_id))].filter((id) => !held.has(id));
  const { rows } = await tx.query<LoadedPerson>(`${withIds} WHERE p.id = ANY($1::int[])`, [
    personIds,
  ]);
  return rows;
}

/** A batch that may assign a group type or write a group (see `lockGroups`). */
const touchesGroups = (e: RecordedEvent): boolean => {
  if (e.type !== 'EventCaptured') return false;
  const d = e.data as EventCapturedData;
  return (
    d.event === '$groupidentify' ||
    (typeof d.properties.$groups === 'object' && d.properties.$groups !== null)
  );
};

/**
 * The working set of a batch. With one ingestion worker, what the cache knows is taken from it;
 * with several (`workers` > 1) there is no cache and every row read is held under the locks of
 * `personsLocks.ts` until the batch commits.
 */
export async function loadWorkingSet(
  tx: pg.PoolClient,
  events: readonly RecordedEvent[],
  cache: PersonsCache | undefined,
  workers: number,
): Promise<{ ws: WorkingSet; counters: Map<string, number> }> {
  // the counters, and which tables and which save the cache would mirror (personsCache.ts): a
  // rebuild swapped in has another `persons` table, any other writer's save another generation
  const { rows: stored } = await tx.query<{ name: string; value: string }>(
    `SELECT name, value::text AS value FROM persons_counters
     UNION ALL SELECT 'tables', 'persons'::regclass::oid::text || ':' || coalesce((SELECT value::text FROM persons_generation WHERE id = 1), '')`,
  );
  const counters = new Map<string, number>();
  for (const c of stored) if (c.name !== 'tables') counters.set(c.name, Number(c.value));
  assertBuiltWith(counters, workers);
  const ws = emptyWorkingSet(counters.get('person_id') ?? 1, counters.get('ord') ?? 1, workers);
  cache?.sync(stored.find((c) => c.name === 'tables')?.value);

  const ids = new Map<string, [number, string]>();
  const groupKeys: [number, string, string][] = [];
  for (const e of events) {
    const k = keysOf(e);
    for (const [p, d] of k.distinctIds) ids.set(mappingKey(p, d), [p, d]);
    groupKeys.push(...k.groups);
  }
  const pairs = [...ids.values()];
  const locked = new Set<string>();
  if (workers > 1) {
    await lockGroups(
      tx,
      events.filter(touchesGroups).map((e) => (e.data as EventCapturedData).projectId),
    );
    await lockDistinctIds(tx, ids.keys(), locked);
  }
  // what the cache knows is taken from it; only the rest is read
  const unknown: [number, string][] = [];
  for (const [key, pair] of ids) {
    if (ws.mapping.has(key)) continue; // another id of a person already taken
    const known = cache?.lookup(key);
    if (known === undefined) {
      unknown.push(pair);
      ws.mapping.set(key, null);
    } else if (known === null) ws.mapping.set(key, null);
    else if (!ws.persons.has(known.id)) {
      holdPerson(ws, known);
      for (const d of known.distinctIds) ws.mapping.set(mappingKey(known.projectId, d), known.id);
    }
  }
  let persons = await readPersons(tx, unknown, ws.persons);
  // Several workers: the persons read may have other ids, which another worker could be changing.
  // Lock those too and read again, until every id of every person read is held.
  for (;;) {
    const more = persons.flatMap((p) =>
      (p.distinct_ids ?? []).map((d) => mappingKey(p.project_id, d)),
    );
    if (workers === 1 || more.every((k) => locked.has(k))) break;
    await lockDistinctIds(tx, more, locked);
    persons = await readPersons(tx, unknown, ws.persons);
  }
  const personIds = persons.map((p) => p.id);
  // Persons holding the uuid a new person of one of these ids would get (it can outlive its
  // creating id: split, then that id's new person deleted): createPerson must see them to pick
  // another uuid, whatever else the batch happens to hold.
  const { rows: uuidHolders } = await tx.query<LoadedPerson>(
    `${withIds} JOIN unnest($1::int[], $2::uuid[]) AS k(p, u) ON p.project_id = k.p AND p.uuid = k.u WHERE NOT (p.id = ANY($3::int[]))`,
    [
      pairs.map((x) => x[0]),
      pairs.map((x) => personUuidFor(x[0], x[1])),
      [...personIds, ...ws.persons.keys()],
    ],
  );
  for (const p of [...persons, ...uuidHolders]) {
    if (ws.persons.has(p.id)) continue;
    const row: PersonRow = {
      id: p.id,
      uuid: p.uuid,
      projectId: p.project_id,
      properties: p.properties,
      isIdentified: p.is_identified,
      createdAt: p.created_at.toISOString(),
      version: p.version,
      distinctIds: p.distinct_ids ?? [],
    };
    holdPerson(ws, row);
    for (const d of row.distinctIds) ws.mapping.set(mappingKey(row.projectId, d), row.id);
  }
  const projects = [...new Set(pairs.map((x) => x[0]).concat(groupKeys.map((g) => g[0])))];
  const { rows: types } = await tx.query<{
    project_id: number;
    group_type: string;
    group_type_index: number;
  }>('SELECT * FROM group_type_mapping WHERE project_id = ANY($1::int[])', [projects]);
  for (const t of types) {
    const m = ws.groupTypes.get(t.project_id) ?? new Map<string, number>();
    m.set(t.group_type, t.group_type_index);
    ws.groupTypes.set(t.project_id, m);
  }
  if (groupKeys.length > 0) {
    const { rows: groups } = await tx.query<{
      project_id: number;
      group_type_index: number;
      group_key: string;
      properties: Record<string, unknown>;
      created_at: Date;
      version: number;
    }>(
      `SELECT g.* FROM groups g JOIN group_type_mapping t ON t.project_id = g.project_id AND t.group_type_index = g.group_type_index
         JOIN unnest($1::int[], $2::text[], $3::text[]) AS k(p, t, key) ON g.project_id = k.p AND t.group_type = k.t AND g.group_key = k.key`,
      [groupKeys.map((g) => g[0]), groupKeys.map((g) => g[1]), groupKeys.map((g) => g[2])],
    );
    for (const g of groups) {
      ws.groups.set(groupKeyOf(g.project_id, g.group_type_index, g.group_key), {
        projectId: g.project_id,
        groupTypeIndex: g.group_type_index,
        groupKey: g.group_key,
        properties: g.properties,
        createdAt: g.created_at.toISOString(),
        version: g.version,
      });
    }
  }
  return { ws, counters };
}

/**
 * Persons and groups from the log: a deterministic fold in log order (captured events and person
 * management events), so a rebuild gives the same integer ids, uuids and properties.
 */
export const personsProjection = pgProjection<PersonsFoldEvent>({
  name: 'persons',
  version: 1,
  tables: [
    'persons',
    'person_distinct_ids',
    'group_type_mapping',
    'groups',
    'person_ingestion_warnings',
    'persons_counters',
    'person_identities',
    'person_links',
  ],
  filter: { eventTypes: ['EventCaptured', ...personEventTypes] },
  // Each batch loads the persons it touches: larger batches share more of those loads.
  batchSize: 2000,
  // Under a stream of small captures, waiting briefly turns many tiny batches into a few big ones.
  maxWaitMs: 50,
  schema,
  async handle(events, tx) {
    const cache = personsCacheFor(tx);
    const { ws } = await loadWorkingSet(tx, events, cache, 1);
    for (const e of events) applyToWorkingSet(ws, e);
    const generation = newGeneration();
    await save(tx, ws, generation);
    cache.stage(generation, ws);
  },
  // A rebuild starts from empty tables, so the whole fold can live in one working set: an id
  // absent from it has no person, as `load` would have found.
  bulkFold() {
    const ws = emptyWorkingSet();
    return {
      apply: (events) => {
        for (const e of events) applyToWorkingSet(ws, e);
      },
      size: () => ws.persons.size + ws.mapping.size + ws.groups.size,
      save: (tx, concurrently) => (concurrently ? concurrently(writesOf(ws)) : save(tx, ws)),
    };
  },
});
