import type { EventCaptured } from '../../commands/capture/model/eventCaptured.ts';
import { propertiesText } from '../../commands/capture/model/personPropertiesFromEvent.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import { encodeRowBinary, type RowBinaryBody } from '../../src/runtime/rowBinary.ts';
import { personUuidFor } from '../persons/personsFold.ts';

/** The `events` table's columns, in its DDL's order. */
export const EVENT_COLUMNS = [
  'uuid',
  'event',
  'properties',
  'timestamp',
  'team_id',
  'project_id',
  'distinct_id',
  'person_id',
  'elements_chain',
  'created_at',
  '$group_0',
  '$group_1',
  '$group_2',
  '$group_3',
  '$group_4',
  '_timestamp',
  '_offset',
] as const;

const groupColumn = (properties: Record<string, unknown>, index: number) => {
  const key = properties[`$group_${index}`];
  return typeof key === 'string' ? key : '';
};

/**
 * The person uuid of (project, distinct id), derived once per batch: a distinct id's events come
 * in runs (a session, a replayed person) and the uuid is a SHA-1 (≈ 2 µs).
 */
export const personUuids = () => {
  const known = new Map<string, string>();
  return (projectId: number, distinctId: string) => {
    const key = `${projectId}|${distinctId}`;
    let uuid = known.get(key);
    if (uuid === undefined) {
      uuid = personUuidFor(projectId, distinctId);
      known.set(key, uuid);
    }
    return uuid;
  };
};

/** An event's row as text values in `EVENT_COLUMNS` order (ClickHouse parses the times and uuids). */
export const eventRow = (
  e: RecordedEvent<EventCaptured>,
  now: string,
  personUuid: (projectId: number, distinctId: string) => string = personUuidFor,
) => {
  const d = e.data;
  return [
    d.uuid,
    d.event,
    propertiesText(d),
    d.timestamp,
    d.projectId,
    d.projectId,
    d.distinctId,
    personUuid(d.projectId, d.distinctId),
    d.elementsChain,
    d.receivedAt,
    groupColumn(d.properties, 0),
    groupColumn(d.properties, 1),
    groupColumn(d.properties, 2),
    groupColumn(d.properties, 3),
    groupColumn(d.properties, 4),
    now,
    e.position.toString(),
  ];
};

/**
 * The batch as RowBinary in `EVENT_COLUMNS` order: what ClickHouse reads with the least work (no
 * text to parse, strings copied as they are). Null when an event has a value whose binary form
 * could differ from what today's text insert stores (see src/runtime/rowBinary.ts): the caller then sends
 * the batch as text, and ClickHouse parses (or refuses) it as before.
 */
export function encodeEventsRowBinary(
  events: readonly RecordedEvent<EventCaptured>[],
  now: Date,
): RowBinaryBody | null {
  const personUuid = personUuids();
  const seconds = Math.floor(now.getTime() / 1000);
  return encodeRowBinary(events, 1536, (w, e) => {
    const d = e.data;
    w.uuid(d.uuid);
    w.string(d.event);
    w.string(propertiesText(d));
    w.dateTime64(d.timestamp);
    w.int64(d.projectId);
    w.int64(d.projectId);
    w.string(d.distinctId);
    w.uuid(personUuid(d.projectId, d.distinctId));
    w.string(d.elementsChain);
    w.dateTime64(d.receivedAt);
    for (let g = 0; g < 5; g++) w.string(groupColumn(d.properties, g));
    w.uint32(seconds);
    w.uint64(e.position);
  });
}
