import type { PersonRow, WorkingSet } from './personsFold.ts';

/** persons kept between batches (least recently used dropped); ≈ 2 KB each with posthog-js properties */
export const PERSONS_CACHE_MAX_PERSONS = 20_000;
/** distinct id → person entries kept (a person's ids, and ids known to have none) */
const MAX_MAPPINGS = 4 * PERSONS_CACHE_MAX_PERSONS;

/**
 * The persons read model's rows as its last committed batch left them, so the next batch loads from
 * Postgres only the distinct ids it has not seen lately (issue #27: a person loaded once, not once
 * per batch). It mirrors one state of the tables, named by the `persons` table's oid and the
 * generation every save writes (a random number, in `persons_generation`): a batch that finds
 * another name than the one the cache mirrors (another writer's save — `parked replay` —, a rebuild
 * swapped in, or a rolled-back save of its own) starts from an empty cache. What a save wrote becomes the cache only once the next
 * batch has found that save's generation, i.e. once it committed.
 */
export type PersonsCache = ReturnType<typeof createPersonsCache>;

export function createPersonsCache(maxPersons = PERSONS_CACHE_MAX_PERSONS) {
  const maxMappings = Math.max(MAX_MAPPINGS, maxPersons);
  let generation: string | undefined;
  let tables = '';
  let staged:
    | { generation: string; persons: PersonRow[]; mappings: [string, number | null][] }
    | undefined;
  const persons = new Map<number, PersonRow>();
  const mappings = new Map<string, number | null>();

  const touch = <K, V>(map: Map<K, V>, key: K, value: V, max: number) => {
    map.delete(key);
    map.set(key, value);
    if (map.size > max) map.delete(map.keys().next().value as K);
  };
  const copy = (row: PersonRow): PersonRow => ({ ...row, distinctIds: [...row.distinctIds] });

  return {
    /**
     * At the start of a batch, with what names the tables' state now: `<persons table oid>:<the
     * generation of the save they are from>`.
     */
    sync(current: string | undefined): void {
      tables = current?.split(':')[0] ?? '';
      if (staged && staged.generation === current) {
        for (const row of staged.persons) touch(persons, row.id, row, maxPersons);
        for (const [key, id] of staged.mappings) touch(mappings, key, id, maxMappings);
      } else if (current !== generation) {
        persons.clear();
        mappings.clear();
      }
      generation = current;
      staged = undefined;
    },
    /**
     * The person of a distinct id as the tables hold it (a copy the batch may change), null when
     * none holds it, undefined when the cache does not know.
     */
    lookup(key: string): PersonRow | null | undefined {
      const id = mappings.get(key);
      if (id === undefined) return undefined;
      if (id === null) return null;
      const row = persons.get(id);
      if (!row) return undefined;
      touch(persons, id, row, maxPersons);
      return copy(row);
    },
    /** What a batch's save writes, under the generation it writes; taken in by the next `sync`. */
    stage(written: string, ws: WorkingSet): void {
      const next = `${tables}:${written}`;
      const rows: PersonRow[] = [];
      const ids: [string, number | null][] = [];
      for (const [id, row] of ws.persons) {
        if (ws.deletedPersons.has(id)) continue;
        rows.push(copy(row));
      }
      // as saved: an id of a deleted person finds no row here, so it is looked up again
      for (const [key, id] of ws.mapping) ids.push([key, id ?? null]);
      for (const id of ws.deletedPersons) persons.delete(id);
      staged = { generation: next, persons: rows, mappings: ids };
    },
  };
}

/** One cache per database the projection writes (tests run several services in one process). */
const caches = new Map<string, PersonsCache>();
export function personsCacheFor(client: {
  host?: string;
  port?: number;
  database?: string | undefined;
}): PersonsCache {
  const database = `${client.host}:${client.port}/${client.database}`;
  let cache = caches.get(database);
  if (!cache) {
    cache = createPersonsCache();
    caches.set(database, cache);
  }
  return cache;
}
