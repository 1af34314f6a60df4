import { type PersonView, toPersonView } from '../../commands/persons/model/personView.ts';
import {
  applyToWorkingSet,
  emptyWorkingSet,
  mappingKey,
  type PersonRow,
  type WorkingSet,
} from '../../projections/persons/personsFold.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import {
  eventTimeOf,
  forgetBookkeeping,
  type Identity,
  type IdentityOf,
  LiveFold,
  ownIdentity,
} from './logReplay.ts';
import { type PersonRef, replayPersonSlice, type TimeTravelDeps } from './personSlice.ts';

export type { PersonRef } from './personSlice.ts';

/**
 * Time travel for persons (issue #4): a person as it was at a moment, recomputed from the log with
 * the very fold the persons projection runs (`applyToWorkingSet`), so "now" and "as of" cannot drift.
 *
 * Semantics (see README.md in this folder):
 * - Cut-off basis is EVENT time: `data.timestamp` (skew-corrected) of `EventCaptured`, `data.at` of
 *   person management events. An event counts when its time is at or before the cut-off (inclusive).
 * - Counted events are folded in LOG order, not time order: PostHog's person rules are "last
 *   processed wins" ($set) / "first processed wins" ($set_once), by ingestion order. So a late-arriving
 *   event with an earlier timestamp counts for every cut-off at or after its timestamp, and it is
 *   applied where it sits in the log (after events that arrived before it, even newer-stamped ones).
 *   Consequence: an answer for a past cut-off can change when such a late event arrives.
 * - Events past the cut-off still created persons in the live fold, so the as-of fold cannot number
 *   persons itself: a second, complete fold (the live one) runs beside it, and each as-of person takes
 *   the id and uuid the live fold gives the person of its distinct id right after the same event.
 *   The live fold's own identities are the read model's (`IdentityOf`): over the whole log its own
 *   numbering, over one person's slice of the log (`personSlice.ts`) the `person_identities` rows.
 *   Ids and uuids therefore equal the live ones, also for persons deleted or merged away since.
 * - Cost: O(the person's events), see personSlice.ts.
 */

/** The persons read slice's Person view (api-spec "Person" + is_identified), so as-of and live answers compare equal. */
export type PersonAsOf = PersonView;

export const cutoffMs = (asOf: Date | string): number =>
  typeof asOf === 'string' ? Date.parse(asOf) : asOf.getTime();

export function isAtOrBefore(event: RecordedEvent, cutoff: number): boolean {
  return Date.parse(eventTimeOf(event)) <= cutoff;
}

/** Finds a person of a working set; `identity` gives the public id/uuid of a row (identity for the live set). */
export function findPerson(
  ws: WorkingSet,
  projectId: number,
  ref: PersonRef,
  identity: (p: PersonRow) => Identity,
): PersonRow | undefined {
  if (ref.kind === 'distinct_id') {
    const id = ws.mapping.get(mappingKey(projectId, ref.distinctId));
    return id === null || id === undefined ? undefined : ws.persons.get(id);
  }
  let found: PersonRow | undefined;
  for (const p of ws.persons.values()) {
    if (p.projectId !== projectId) continue;
    const who = identity(p);
    const hit = ref.kind === 'id' ? who.id === ref.id : who.uuid === ref.uuid;
    // Two as-of persons can share a live identity (merged later in the log): the earliest created wins.
    if (hit && (!found || p.id < found.id)) found = p;
  }
  return found;
}

export function viewOf(p: PersonRow, who: Identity): PersonAsOf {
  return toPersonView({
    id: who.id,
    uuid: who.uuid,
    properties: { ...p.properties },
    is_identified: p.isIdentified,
    created_at: new Date(p.createdAt),
    distinct_ids: [...p.distinctIds],
  });
}

/** The pure part: feed it the log (or a person's slice of it) in order, then ask. */
export class PersonAsOfFold {
  /** every event: the live projection's state, the source of ids */
  readonly live: LiveFold;
  /** only events at or before the cut-off; its own ids are private */
  readonly past: WorkingSet = emptyWorkingSet();
  private readonly identities = new Map<number, Identity>();

  constructor(
    readonly cutoff: number,
    identityOf: IdentityOf = ownIdentity,
  ) {
    this.live = new LiveFold(identityOf);
  }

  apply(event: RecordedEvent): void {
    this.live.apply(event);
    if (isAtOrBefore(event, this.cutoff)) {
      applyToWorkingSet(this.past, event);
      for (const c of this.past.createdPersons)
        this.identities.set(c.id, this.liveIdentityOf(this.past.persons.get(c.id)!));
    }
    forgetBookkeeping(this.past);
  }

  /** The live person holding the new person's first distinct id right after the same event. */
  private liveIdentityOf(p: PersonRow): Identity {
    const live = this.live.ws;
    for (const d of p.distinctIds) {
      const liveId = live.mapping.get(mappingKey(p.projectId, d));
      const person = liveId === null || liveId === undefined ? undefined : live.persons.get(liveId);
      if (person) return this.live.identity(person);
    }
    // Not reachable with the current rules (the live fold applied the same event); keep an answer.
    return { id: p.id, uuid: p.uuid };
  }

  private identity = (p: PersonRow): Identity =>
    this.identities.get(p.id) ?? { id: p.id, uuid: p.uuid };

  find(projectId: number, ref: PersonRef): PersonAsOf | null {
    const p = findPerson(this.past, projectId, ref, this.identity);
    return p ? viewOf(p, this.identity(p)) : null;
  }
}

/** Pure: a person as of `asOf` from a whole log (every project) in log order. */
export function personAsOfEvents(
  events: Iterable<RecordedEvent>,
  projectId: number,
  ref: PersonRef,
  asOf: Date | string,
): PersonAsOf | null {
  const fold = new PersonAsOfFold(cutoffMs(asOf));
  for (const e of events) fold.apply(e);
  return fold.find(projectId, ref);
}

/**
 * The person as of `asOf`, from its part of the log (null when nobody matched then; without reading
 * the log when no person of the project ever had that id or uuid).
 */
export async function personAsOf(
  deps: TimeTravelDeps,
  projectId: number,
  ref: PersonRef,
  asOf: Date | string,
): Promise<PersonAsOf | null> {
  const fold = await replayPersonSlice(
    deps,
    projectId,
    ref,
    (identityOf) => new PersonAsOfFold(cutoffMs(asOf), identityOf),
  );
  return fold?.find(projectId, ref) ?? null;
}
