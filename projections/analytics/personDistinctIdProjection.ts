import type { EventCaptured } from '../../commands/capture/model/eventCaptured.ts';
import type { PersonDeleted, PersonSplit } from '../../commands/persons/model/personEvents.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import {
  type ChBulk,
  chProjection,
  type DedupToken,
  dedupSettings,
} from '../../src/processing/clickhouseProjection.ts';
import { chunkPositions } from '../../src/processing/logInClickHouse.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { encodeRowBinary } from '../../src/runtime/rowBinary.ts';
import type { PersonMappingLookup } from '../persons/personMappingLookup.ts';
import { CAPTURED_DATA_PARTS, PERSONLESS, propsReadable } from '../shared/capturedDataSql.ts';

type MappingEvent = EventCaptured | PersonSplit | PersonDeleted;

/** most (project, distinct id) pairs remembered as written (≈ 100 bytes each) */
const WRITTEN_CAPACITY = 200_000;

/**
 * The distinct ids this runner has written with a person, newest last. A distinct id changes person
 * only through an event this read model reads (a merge naming it, a split, a deletion, its first
 * event), and each of those is looked up and written again; so an ordinary event of a remembered id
 * needs neither the persons read model (no wait for its checkpoint, no Postgres lookup) nor a row.
 * Forgotten whenever the runner goes back in the log (a replay into new tables must write them all).
 */
function writtenOwners() {
  const owners = new Map<string, string>();
  let after = -1n;
  const key = (projectId: number, distinctId: string) => `${projectId}:${distinctId}`;
  return {
    has: (projectId: number, distinctId: string) => owners.has(key(projectId, distinctId)),
    /** the runner's next batch starts here: anything but the position after the last one forgets */
    from(position: bigint) {
      if (position <= after) owners.clear();
    },
    through(position: bigint) {
      after = position;
    },
    took(rows: readonly { projectId: number; distinctId: string; personUuid: string | null }[]) {
      for (const r of rows) {
        const k = key(r.projectId, r.distinctId);
        owners.delete(k); // re-inserted as the newest
        if (r.personUuid !== null) owners.set(k, r.personUuid);
      }
      for (const k of owners.keys()) {
        if (owners.size <= WRITTEN_CAPACITY) break;
        owners.delete(k);
      }
    },
  };
}

/** The distinct ids an event may move between persons (its own, and those it merges in). */
function touched(e: MappingEvent): string[] {
  if (e.type === 'PersonSplit') return [e.data.keepDistinctId, ...e.data.splitDistinctIds];
  if (e.type === 'PersonDeleted') return [e.data.distinctId, ...e.data.distinctIds];
  const p = e.data.properties;
  if (p.$process_person_profile === false) return [];
  const ids = [e.data.distinctId];
  for (const key of ['$anon_distinct_id', 'alias'] as const)
    if (typeof p[key] === 'string' && p[key] !== '') ids.push(p[key] as string);
  return ids;
}

/** Adds a project's distinct ids to `wanted`; returns how many were new. */
function add(wanted: Map<number, Set<string>>, projectId: number, ids: readonly string[]): number {
  if (ids.length === 0) return 0;
  const set = wanted.get(projectId) ?? new Set<string>();
  wanted.set(projectId, set);
  let added = 0;
  for (const id of ids)
    if (!set.has(id)) {
      set.add(id);
      added++;
    }
  return added;
}

/** Adds the distinct ids the events touch to `wanted`; returns how many were new. */
function collect(
  events: readonly RecordedEvent<MappingEvent>[],
  wanted: Map<number, Set<string>>,
): number {
  let added = 0;
  for (const e of events) added += add(wanted, e.data.projectId, touched(e));
  return added;
}

/**
 * `touched` of the chunk's captured events in SQL (a replay that ClickHouse reads the log for),
 * in one pass: (project, distinct id, 0) once each, and (0, '', position) for each row left to
 * `collect` (other event types, rows SQL cannot read exactly).
 */
const touchedInChunk = (table: string) => `
  SELECT DISTINCT project, id, pos FROM (
    WITH ${CAPTURED_DATA_PARTS},
      type = 'EventCaptured' AND cut_ok
        AND ${propsReadable(['$anon_distinct_id', 'alias', '$process_person_profile'])} AS row_ok,
      arrayMap(k -> if(position(props, concat('"', k, '":')) > 0 AND JSONType(props, k) = 'String',
        JSONExtractString(props, k), ''), ['$anon_distinct_id', 'alias']) AS _merged
    SELECT if(row_ok, h.projectId, 0) AS project, if(row_ok, 0, position) AS pos,
      if(row_ok, arrayConcat([h.distinctId], arrayFilter(x -> x != '', _merged)), ['']) AS ids
    FROM ${table} WHERE NOT row_ok OR NOT ${PERSONLESS}
  ) ARRAY JOIN ids AS id`;

const COLUMNS = ['team_id', 'distinct_id', 'person_id', 'is_deleted', 'version'] as const;
/** the person of a deleted distinct id */
const NO_PERSON = '00000000-0000-0000-0000-000000000000';

/** distinct ids per lookup and insert when a rebuild writes the gathered ones */
const BULK_IDS = 20_000;

const ddl = (db: string) => [
  `CREATE TABLE IF NOT EXISTS ${db}.person_distinct_id (
    team_id Int64,
    distinct_id String,
    person_id UUID,
    is_deleted UInt8,
    version UInt64
  ) ENGINE = ReplacingMergeTree(version)
  ORDER BY (team_id, distinct_id)`,
];

/** The read model to wait for (read-your-writes) before an analytics query. */
export const personDistinctIdReadModel = { name: 'person_distinct_id', ddl } as const;

/**
 * ClickHouse `person_distinct_id`: which person each distinct id belongs to now, after merges
 * ($identify, $create_alias, $merge_dangerously), splits and deletions, as PostHog's
 * person_distinct_id2 (ReplacingMergeTree on `version`, the log position). The events table keeps
 * the person of the distinct id at capture time; analytics join this table to count a merged
 * person once. The persons projection (Postgres) decides merges; for each batch this reads, once
 * it has applied the batch, every distinct id of the persons that hold the batch's ids, and
 * writes them with the batch's last position. A rebuild reads the same final state.
 */
export const personDistinctIdProjection = (lookup: PersonMappingLookup) => {
  const written = writtenOwners();
  /** each bulk's way to take ids gathered in SQL (`fromLogChunk`) */
  const gathered = new WeakMap<
    ChBulk<MappingEvent>,
    (projectId: number, ids: string[], through: bigint) => void
  >();
  /**
   * Writes the current owner of every wanted distinct id (and of their persons' other ids) as of
   * `upTo`, once the persons read model has applied `touchedBy`, the last event that touched them
   * (its checkpoint stays at the last event it folds, which the log's head may be past).
   */
  const write = async (
    ch: ClickHouse,
    wanted: ReadonlyMap<number, ReadonlySet<string>>,
    upTo: bigint,
    touchedBy: bigint,
    dedupToken: DedupToken,
  ) => {
    const owners = await lookup(wanted, touchedBy);
    const rows = [...owners].flatMap(([projectId, list]) =>
      list.map((o) => ({ projectId, distinctId: o.distinctId, personUuid: o.personUuid })),
    );
    if (rows.length === 0) return rows;
    const settings = dedupSettings(dedupToken);
    // RowBinary, as the events insert (issue #27); as text when a value has no certain binary form
    const binary = encodeRowBinary(rows, 96, (w, r) => {
      w.int64(r.projectId);
      w.string(r.distinctId);
      w.uuid(r.personUuid ?? NO_PERSON);
      w.uint8(r.personUuid === null ? 1 : 0);
      w.uint64(upTo);
    });
    if (binary) {
      try {
        await ch.insertRaw(
          `${ch.database}.person_distinct_id`,
          COLUMNS,
          'RowBinary',
          binary.bytes,
          settings,
        );
      } finally {
        binary.release();
      }
      return rows;
    }
    await ch.client.insert({
      table: `${ch.database}.person_distinct_id`,
      values: rows.map((r) => ({
        team_id: r.projectId,
        distinct_id: r.distinctId,
        person_id: r.personUuid ?? NO_PERSON,
        is_deleted: r.personUuid === null ? 1 : 0,
        version: upTo.toString(),
      })),
      format: 'JSONEachRow',
      clickhouse_settings: settings,
    });
    return rows;
  };
  return chProjection<MappingEvent>({
    name: 'person_distinct_id',
    version: 1,
    filter: { eventTypes: ['EventCaptured', 'PersonSplit', 'PersonDeleted'] },
    ddl,
    drop: (db) => [`DROP TABLE IF EXISTS ${db}.person_distinct_id`],
    tables: ['person_distinct_id'],
    async insert(ch, events, dedupToken) {
      if (events.length === 0) return;
      written.from(events[0]!.position);
      const wanted = new Map<number, Set<string>>();
      for (const e of events) {
        const ids = touched(e);
        // an ordinary event of a distinct id already written with its person moves nobody
        if (
          e.type === 'EventCaptured' &&
          ids.length === 1 &&
          written.has(e.data.projectId, ids[0]!)
        )
          continue;
        add(wanted, e.data.projectId, ids);
      }
      const last = events[events.length - 1]!.position;
      if (wanted.size > 0) written.took(await write(ch, wanted, last, last, dedupToken));
      written.through(last);
    },
    // Every write reads the persons' current state, so a replay only needs each distinct id once:
    // gathered over the whole log and written at the end, in lookups of BULK_IDS ids (issue #11:
    // a lookup and an insert per block took about as long as the events table's inserts).
    bulk() {
      let wanted = new Map<number, Set<string>>();
      let size = 0;
      let touchedBy = -1n;
      const bulk: ChBulk<MappingEvent> = {
        add(events) {
          size += collect(events, wanted);
          const last = events[events.length - 1]?.position ?? -1n;
          if (last > touchedBy) touchedBy = last;
        },
        size: () => size,
        async write(ch, upTo) {
          // taken first: the replay goes on adding the next blocks' ids while this writes
          const taken = wanted;
          wanted = new Map();
          size = 0;
          for (const [projectId, ids] of taken) {
            const list = [...ids];
            for (let from = 0; from < list.length; from += BULK_IDS)
              await write(
                ch,
                new Map([[projectId, new Set(list.slice(from, from + BULK_IDS))]]),
                upTo,
                touchedBy < upTo ? touchedBy : upTo,
                null,
              );
          }
        },
      };
      gathered.set(bulk, (projectId, ids, through) => {
        size += add(wanted, projectId, ids);
        if (through > touchedBy) touchedBy = through;
      });
      return bulk;
    },
    async fromLogChunk(ch, chunk, bulk) {
      const gather = bulk && gathered.get(bulk);
      if (!gather) return chunkPositions(ch, `SELECT position FROM ${chunk.table}`);
      const result = await ch.client.query({
        query: touchedInChunk(chunk.table),
        format: 'JSONCompactEachRow',
      });
      const byProject = new Map<number, string[]>();
      const left: bigint[] = [];
      for (const [projectId, id, position] of (await result.json()) as [
        number | string,
        string,
        number | string,
      ][]) {
        if (Number(position) > 0) {
          left.push(BigInt(position));
          continue;
        }
        const list = byProject.get(Number(projectId)) ?? [];
        list.push(id);
        byProject.set(Number(projectId), list);
      }
      const last = chunk.types.get('EventCaptured')?.last ?? -1n;
      for (const [projectId, ids] of byProject) gather(projectId, ids, last);
      return left;
    },
  });
};
