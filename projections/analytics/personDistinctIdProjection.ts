import type { EventCaptured } from '../../commands/capture/model/eventCaptured.ts';
import type { PersonDeleted, PersonSplit } from '../../commands/persons/model/personEvents.ts';
import {
  type ChProjection,
  chProjection,
  dedupSettings,
} from '../../src/processing/clickhouseProjection.ts';
import type { PersonMappingLookup } from '../persons/personMappingLookup.ts';

type MappingEvent = EventCaptured | PersonSplit | PersonDeleted;

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
export const personDistinctIdProjection = (lookup: PersonMappingLookup) =>
  chProjection<MappingEvent>({
    name: 'person_distinct_id',
    version: 1,
    filter: { eventTypes: ['EventCaptured', 'PersonSplit', 'PersonDeleted'] },
    ddl,
    drop: (db) => [`DROP TABLE IF EXISTS ${db}.person_distinct_id`],
    tables: ['person_distinct_id'],
    async insert(ch, events, dedupToken) {
      if (events.length === 0) return;
      const wanted = new Map<number, Set<string>>();
      for (const e of events) {
        const ids = touched(e);
        if (ids.length === 0) continue;
        const set = wanted.get(e.data.projectId) ?? new Set<string>();
        for (const id of ids) set.add(id);
        wanted.set(e.data.projectId, set);
      }
      if (wanted.size === 0) return;
      const version = events[events.length - 1]!.position.toString();
      const owners = await lookup(wanted, events[events.length - 1]!.position);
      const values = [...owners].flatMap(([projectId, list]) =>
        list.map((o) => ({
          team_id: projectId,
          distinct_id: o.distinctId,
          person_id: o.personUuid ?? '00000000-0000-0000-0000-000000000000',
          is_deleted: o.personUuid === null ? 1 : 0,
          version,
        })),
      );
      await ch.client.insert({
        table: `${ch.database}.person_distinct_id`,
        values,
        format: 'JSONEachRow',
        clickhouse_settings: dedupSettings(dedupToken),
      });
    },
  }) satisfies ChProjection<MappingEvent>;
