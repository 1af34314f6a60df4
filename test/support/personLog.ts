import type { EventCapturedData } from '../../commands/capture/model/eventCaptured.ts';
import type { PersonEvent } from '../../commands/persons/model/personEvents.ts';
import {
  applyToWorkingSet,
  emptyWorkingSet,
  mappingKey,
  personUuidFor,
} from '../../projections/persons/personsFold.ts';
import type { PersonIdentity } from '../../projections/persons/personsReader.ts';
import { forgetBookkeeping } from '../../queries/personTimeTravel/logReplay.ts';
import type {
  PersonIndex,
  SliceStats,
  TimeTravelDeps,
  TimeTravelLimits,
} from '../../queries/personTimeTravel/personSlice.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import type { ReadStreamOptions } from '../../src/eventStore/eventStore.ts';

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

/**
 * A person management event naming the person by `distinctId`, decided at `at`, appended to the
 * stream of the person's uuid (by default the uuid a person created for `distinctId` gets).
 */
export function managed<T extends PersonEvent['type']>(
  type: T,
  distinctId: string,
  at: string,
  extra: Omit<
    Extract<PersonEvent, { type: T }>['data'],
    'projectId' | 'personUuid' | 'distinctId' | 'at'
  >,
  projectId = 1,
  personUuid = personUuidFor(projectId, distinctId),
): Draft {
  const data = {
    projectId,
    personUuid,
    distinctId,
    at,
    ...extra,
  };
  return {
    type,
    data,
    streamName: `person-${projectId}:${personUuid}`,
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

/**
 * Time travel's dependencies over a hand-made log, as the server has them over the real one: the log
 * read by stream (revisions counted per stream), and the persons read model's time-travel index
 * (`person_identities`, `person_links`) built by the very fold the projection runs, applied up to
 * `upTo` (default: the whole log). `reads` lists the streams read; `stats` the last answer's.
 */
export function sliceDeps(
  events: readonly RecordedEvent[],
  options: {
    upTo?: bigint;
    limits?: TimeTravelLimits;
    /** the log as it is now, if it lost events since the index was built (erased by hand) */
    log?: readonly RecordedEvent[];
  } = {},
): TimeTravelDeps & { reads: string[]; stats: SliceStats[] } {
  const upTo = options.upTo ?? events[events.length - 1]?.position ?? -1n;
  const ws = emptyWorkingSet();
  const identities: (PersonIdentity & { projectId: number })[] = [];
  const links = new Map<string, Set<string>>();
  const link = (p: number, a: string, b: string) => {
    const key = mappingKey(p, a);
    links.set(key, (links.get(key) ?? new Set()).add(b));
  };
  for (const e of events) {
    if (e.position > upTo) break;
    applyToWorkingSet(ws, e);
    for (const c of ws.createdPersons)
      identities.push({
        id: c.id,
        uuid: c.uuid,
        distinctId: c.distinctId,
        position: c.position,
        projectId: c.projectId,
      });
    for (const l of ws.links) {
      link(l.projectId, l.distinctId, l.otherId);
      link(l.projectId, l.otherId, l.distinctId);
    }
    forgetBookkeeping(ws);
  }
  const streams = new Map<string, RecordedEvent[]>();
  for (const e of options.log ?? events) {
    const stream = streams.get(e.streamName) ?? [];
    stream.push({ ...e, revision: BigInt(stream.length) });
    streams.set(e.streamName, stream);
  }
  const reads: string[] = [];
  const stats: SliceStats[] = [];
  const index: PersonIndex = {
    identitiesByRef: async (projectId, ref) =>
      identities.filter(
        (i) =>
          i.projectId === projectId && (ref.kind === 'id' ? i.id === ref.id : i.uuid === ref.uuid),
      ),
    identitiesCreatedFor: async (projectId, distinctIds) =>
      identities.filter((i) => i.projectId === projectId && distinctIds.includes(i.distinctId)),
    linkedDistinctIds: async (projectId, distinctIds) => {
      const out = new Set<string>();
      for (const d of distinctIds)
        for (const o of links.get(mappingKey(projectId, d)) ?? []) out.add(o);
      return [...out].filter((d) => !distinctIds.includes(d));
    },
    appliedPosition: async () => upTo,
    identityIndexComplete: async () => true,
  };
  return {
    index,
    store: {
      readStream: async (name: string, o: ReadStreamOptions = {}) => {
        reads.push(name);
        const all = streams.get(name) ?? [];
        const from = Number(o.fromRevision ?? 0n);
        return all.slice(from, o.maxCount === undefined ? undefined : from + o.maxCount) as never;
      },
    },
    ...(options.limits ? { limits: options.limits } : {}),
    onRead: (s) => stats.push(s),
    reads,
    stats,
  };
}
