import { keysOf, mappingKey, type WorkingSet } from '../../projections/persons/personsFold.ts';
import type { Properties } from '../../projections/persons/personUpdates.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import {
  distinctIdOf,
  eventNameOf,
  eventTimeOf,
  type IdentityOf,
  LiveFold,
  ownIdentity,
  projectOf,
} from './logReplay.ts';
import { replayPersonSlice, type TimeTravelDeps } from './personSlice.ts';

/**
 * `npm run cli -- person history <distinct_id>`: every property change of the person that distinct id
 * belongs to now, in log order (the order the values were decided in), including the changes of
 * persons merged into it. Each change: event time, event, the distinct id it came from, key,
 * before → after (absent before/after = the key was not set).
 */

export type PropertyChange = {
  timestamp: string;
  event: string;
  distinct_id: string;
  property: string;
  before?: unknown;
  after?: unknown;
};
export type PersonHistory = {
  person: { id: number; uuid: string; distinct_ids: string[] };
  changes: PropertyChange[];
};

type Row = PropertyChange & { personId: number };

const idOf = (ws: WorkingSet, projectId: number, distinctId: string): number | undefined =>
  ws.mapping.get(mappingKey(projectId, distinctId)) ?? undefined;

function diff(
  before: Properties,
  after: Properties,
): { key: string; before?: unknown; after?: unknown }[] {
  const out: { key: string; before?: unknown; after?: unknown }[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const had = key in before;
    const has = key in after;
    if (had && has && JSON.stringify(before[key]) === JSON.stringify(after[key])) continue;
    out.push({
      key,
      ...(had ? { before: before[key] } : {}),
      ...(has ? { after: after[key] } : {}),
    });
  }
  return out;
}

export class PersonHistoryFold {
  private readonly live: LiveFold;
  private readonly rows: Row[] = [];
  /** person id merged away → the person it was merged into */
  private readonly mergedInto = new Map<number, number>();

  constructor(
    private readonly projectId: number,
    identityOf: IdentityOf = ownIdentity,
  ) {
    this.live = new LiveFold(identityOf);
  }

  get ws(): WorkingSet {
    return this.live.ws;
  }

  apply(event: RecordedEvent): void {
    const ws = this.ws;
    if (projectOf(event) !== this.projectId) {
      this.live.apply(event);
      return;
    }
    const distinctId = distinctIdOf(event);
    // Properties objects are replaced, never mutated, by the fold: references are snapshots.
    const before = new Map<number, Properties>();
    for (const [p, d] of keysOf(event).distinctIds) {
      const id = idOf(ws, p, d);
      if (id !== undefined) before.set(id, ws.persons.get(id)!.properties);
    }
    const managedId = idOf(ws, this.projectId, distinctId);
    this.live.apply(event);
    // A captured event changes the person its distinct id maps to afterwards (merges included);
    // a management event the person it named.
    const targetId =
      event.type === 'EventCaptured' ? idOf(ws, this.projectId, distinctId) : managedId;
    if (event.type === 'EventCaptured' && targetId !== undefined) {
      for (const id of before.keys())
        if (id !== targetId && !ws.persons.has(id)) this.mergedInto.set(id, targetId);
    }
    const target = targetId === undefined ? undefined : ws.persons.get(targetId);
    if (!target) return;
    const was = before.get(target.id) ?? {};
    if (was === target.properties) return;
    const timestamp = eventTimeOf(event);
    for (const c of diff(was, target.properties)) {
      this.rows.push({
        personId: target.id,
        timestamp,
        event: eventNameOf(event),
        distinct_id: distinctId,
        property: c.key,
        ...('before' in c ? { before: c.before } : {}),
        ...('after' in c ? { after: c.after } : {}),
      });
    }
  }

  private resolve(id: number): number {
    let at = id;
    for (let next = this.mergedInto.get(at); next !== undefined; next = this.mergedInto.get(at))
      at = next;
    return at;
  }

  result(distinctId: string): PersonHistory | null {
    const id = idOf(this.ws, this.projectId, distinctId);
    const person = id === undefined ? undefined : this.ws.persons.get(id);
    if (!person) return null;
    const changes = this.rows
      .filter((r) => this.resolve(r.personId) === person.id)
      .map(({ personId: _, ...c }) => c);
    const { id: publicId, uuid } = this.live.identity(person);
    return { person: { id: publicId, uuid, distinct_ids: [...person.distinctIds] }, changes };
  }
}

/** The history of the person `distinctId` belongs to now, from its part of the log. */
export async function personHistory(
  deps: TimeTravelDeps,
  projectId: number,
  distinctId: string,
): Promise<PersonHistory | null> {
  const fold = await replayPersonSlice(
    deps,
    projectId,
    { kind: 'distinct_id', distinctId },
    (identityOf) => new PersonHistoryFold(projectId, identityOf),
  );
  return fold?.result(distinctId) ?? null;
}

const show = (present: boolean, v: unknown) => (present ? JSON.stringify(v) : '(unset)');

/** One line per change: `time  event  [distinct id]  key: before → after`. */
export function formatHistory(h: PersonHistory, asked: string): string {
  const head = `person ${h.person.id} (${h.person.uuid}), distinct ids: ${h.person.distinct_ids.join(', ')}`;
  if (h.changes.length === 0) return `${head}\nno property changes`;
  const lines = h.changes.map((c) => {
    const from = c.distinct_id === asked ? '' : `  [${c.distinct_id}]`;
    return `${c.timestamp}  ${c.event}${from}  ${c.property}: ${show('before' in c, c.before)} → ${show('after' in c, c.after)}`;
  });
  return [head, ...lines].join('\n');
}
