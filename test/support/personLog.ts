import type { EventCapturedData } from '../../commands/capture/model/eventCaptured.ts';
import type { PersonEvent } from '../../commands/persons/model/personEvents.ts';
import { personUuidFor } from '../../projections/persons/personsFold.ts';
import type { RecordedEvent } from '../../src/core/event.ts';

/**
 * Hand-made logs for the persons fold and time-travel unit tests: each builder returns a recorded event whose
 * position is its index in the list (log order), with event time `ts`.
 */
export type Captured = {
  distinctId: string;
  ts: string;
  event?: string;
  projectId?: number;
  uuid?: string;
  set?: Record<string, unknown>;
  setOnce?: Record<string, unknown>;
  unset?: string[];
  properties?: Record<string, unknown>;
  /** arrival time; defaults to `ts` */
  receivedAt?: string;
};

type Draft = Omit<RecordedEvent, 'position' | 'revision' | 'id'>;

export function captured(c: Captured): Draft {
  const properties: Record<string, unknown> = { ...(c.properties ?? {}) };
  if (c.set) properties.$set = c.set;
  if (c.setOnce) properties.$set_once = c.setOnce;
  if (c.unset) properties.$unset = c.unset;
  const data: EventCapturedData = {
    uuid:
      c.uuid ??
      `00000000-0000-4000-8000-${Math.random().toString(16).slice(2, 14).padEnd(12, '0')}`,
    projectId: c.projectId ?? 1,
    event: c.event ?? '$pageview',
    distinctId: c.distinctId,
    properties,
    timestamp: c.ts,
    elementsChain: '',
    sentAt: null,
    receivedAt: c.receivedAt ?? c.ts,
    ip: null,
  };
  return {
    type: 'EventCaptured',
    data,
    streamName: `capture-${data.projectId}:${c.distinctId}`,
    metadata: { occurredAt: data.receivedAt },
    recordedAt: new Date(data.receivedAt),
  };
}

export const identify = (
  distinctId: string,
  anon: string,
  ts: string,
  extra: Omit<Captured, 'distinctId' | 'ts'> = {},
) =>
  captured({
    ...extra,
    distinctId,
    ts,
    event: '$identify',
    properties: { ...(extra.properties ?? {}), $anon_distinct_id: anon },
  });

/** A person management event naming the person by `distinctId`, decided at `at`. */
export function managed<T extends PersonEvent['type']>(
  type: T,
  distinctId: string,
  at: string,
  extra: Omit<
    Extract<PersonEvent, { type: T }>['data'],
    'projectId' | 'personUuid' | 'distinctId' | 'at'
  >,
  projectId = 1,
): Draft {
  const data = {
    projectId,
    personUuid: personUuidFor(projectId, distinctId),
    distinctId,
    at,
    ...extra,
  };
  return {
    type,
    data,
    streamName: `person-${projectId}:${distinctId}`,
    metadata: { occurredAt: at },
    recordedAt: new Date(at),
  };
}

/** Positions (1-based, in list order) and revisions. */
export const log = (...drafts: Draft[]): RecordedEvent[] =>
  drafts.map(
    (d, i) => ({ ...d, id: `e${i + 1}`, position: BigInt(i + 1), revision: 0n }) as RecordedEvent,
  );

export const T = (day: number, hour = 10) =>
  `2024-01-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00.000Z`;
