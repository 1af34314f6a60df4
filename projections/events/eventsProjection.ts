import type { EventCaptured } from '../../commands/capture/model/eventCaptured.ts';
import { assignInto, copyOf } from '../../src/core/objects.ts';
import {
  type ChProjection,
  chProjection,
  dedupSettings,
} from '../../src/processing/clickhouseProjection.ts';
import { EVENT_COLUMNS, encodeEventsRowBinary, eventRow, personUuids } from './eventsRowBinary.ts';

/**
 * The ClickHouse `events` table, modelled on PostHog's: ReplacingMergeTree ordered by team, day,
 * event, distinct id and uuid, so a duplicate that slipped past insert deduplication still
 * collapses. `_offset` is the event's position in our log.
 */
export const eventsProjection = chProjection<EventCaptured>({
  name: 'events',
  version: 1,
  filter: { eventTypes: ['EventCaptured'] },
  ddl: (db) => [
    `CREATE TABLE IF NOT EXISTS ${db}.events (
      uuid UUID,
      event String,
      properties String,
      timestamp DateTime64(6, 'UTC'),
      team_id Int64,
      project_id Int64,
      distinct_id String,
      person_id UUID,
      elements_chain String,
      created_at DateTime64(6, 'UTC'),
      \`$group_0\` String,
      \`$group_1\` String,
      \`$group_2\` String,
      \`$group_3\` String,
      \`$group_4\` String,
      _timestamp DateTime,
      _offset UInt64
    ) ENGINE = ReplacingMergeTree(_timestamp)
    PARTITION BY toYYYYMM(timestamp)
    ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))
    SETTINGS non_replicated_deduplication_window = 1000`,
  ],
  drop: (db) => [`DROP TABLE IF EXISTS ${db}.events`],
  tables: ['events'],
  // Merges were most of chDB's CPU under capture load (≈ 50 of 90 µs a row, issue #27): parts stay
  // compact (one file, not one a column) up to 256 MiB, and each merge takes more parts at once
  // (base 5 → 8), so a row is rewritten fewer times. bench/chMerges.ts: medians 89 → 76 µs a
  // row, inserts and merges (docs/PERFORMANCE.md "Issue #27, sixth part").
  tableSettings: {
    events: { min_bytes_for_wide_part: 268_435_456, merge_selector_base: 8 },
  },
  async insert(ch, events, dedupToken) {
    const now = new Date();
    // RowBinary: ClickHouse copies the values, nothing to parse (issue #27, docs/DECISIONS.md
    // "ClickHouse insert formats")
    const binary = encodeEventsRowBinary(events, now);
    if (binary) {
      try {
        await ch.insertRaw(
          `${ch.database}.events`,
          EVENT_COLUMNS,
          'RowBinary',
          binary.bytes,
          dedupSettings(dedupToken),
        );
      } finally {
        binary.release();
      }
      return;
    }
    // A value only ClickHouse's text parsers read exactly (a time `best_effort` reads, another
    // spelling of a uuid, a lone surrogate) or refuse (the event is then parked): as text.
    const at = now.toISOString();
    const personUuid = personUuids();
    await ch.client.insert({
      table: `${ch.database}.events`,
      values: events.map((e) => eventRow(e, at, personUuid)),
      columns: [...EVENT_COLUMNS],
      format: 'JSONCompactEachRow',
      clickhouse_settings: {
        ...dedupSettings(dedupToken),
        date_time_input_format: 'best_effort',
      },
    });
  },
});

/**
 * `${projectId}|${distinctId}` → the log position up to which that distinct id's events were
 * deleted (person deletion with `delete_events`), for deletions reaching `fromPosition` or later.
 */
export type DeletedEventsLookup = (fromPosition: bigint) => Promise<ReadonlyMap<string, bigint>>;

/**
 * The events projection minus deleted events: an event is left out when its (project, distinct
 * id) was deleted up to a position at or after its own. The deletion job removes such events
 * from ClickHouse once; this keeps a replay of the log (a rebuild) from writing them again. The
 * lookup reads a Postgres read model of completed deletions (projections/eventDeletions/)
 * once per batch.
 */
export const skippingDeletedEvents = (
  projection: ChProjection<EventCaptured>,
  deleted: DeletedEventsLookup,
): ChProjection<EventCaptured> => ({
  ...projection,
  async insert(ch, events, dedupToken) {
    if (events.length === 0) return;
    const cut = await deleted(events[0]!.position);
    const kept =
      cut.size === 0
        ? events
        : events.filter((e) => {
            const d = e.data;
            const upTo = cut.get(`${d.projectId}|${d.distinctId}`);
            return upTo === undefined || e.position > upTo;
          });
    if (kept.length > 0) await projection.insert(ch, kept, dedupToken);
  },
});

/** projectId → group type → index, as the persons projection assigned them (capture.md §3.6). */
export type GroupTypesLookup = (
  projectIds: readonly number[],
  upToPosition: bigint,
) => Promise<ReadonlyMap<number, ReadonlyMap<string, number>>>;

/**
 * Events with `$groups` carry `$group_<index>` (properties and columns), as PostHog's ingestion
 * adds them. Indexes are assigned by the persons projection in log order and never change, so the
 * lookup first waits until that projection has passed the batch; a rebuild then finds the same
 * indexes. Personless events get none, as in PostHog.
 */
export const withGroupIndexes = (
  projection: ChProjection<EventCaptured>,
  groupTypes: GroupTypesLookup,
): ChProjection<EventCaptured> => ({
  ...projection,
  async insert(ch, events, dedupToken) {
    const grouped = new Set(
      events.filter((e) => {
        const p = e.data.properties;
        return (
          typeof p.$groups === 'object' && p.$groups !== null && p.$process_person_profile !== false
        );
      }),
    );
    if (grouped.size === 0) return projection.insert(ch, events, dedupToken);
    const types = await groupTypes(
      [...new Set([...grouped].map((e) => e.data.projectId))],
      events[events.length - 1]!.position,
    );
    const withIndexes = events.map((e) => {
      const d = e.data;
      const groups = d.properties.$groups;
      if (!grouped.has(e) || typeof groups !== 'object' || groups === null) return e;
      const extra: Record<string, string> = {};
      for (const [type, key] of Object.entries(groups as Record<string, unknown>)) {
        const index = types.get(d.projectId)?.get(type);
        if (index !== undefined && key !== undefined && key !== null)
          extra[`$group_${index}`] = typeof key === 'string' ? key : JSON.stringify(key);
      }
      return { ...e, data: { ...d, properties: assignInto(copyOf(d.properties), extra) } };
    });
    return projection.insert(ch, withIndexes, dedupToken);
  },
});
