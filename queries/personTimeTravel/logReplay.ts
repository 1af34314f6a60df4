import type { EventCapturedData } from '../../commands/capture/model/eventCaptured.ts';
import { type PersonEvent, personEventTypes } from '../../commands/persons/model/personEvents.ts';
import {
  applyToWorkingSet,
  emptyWorkingSet,
  type PersonCreated,
  type PersonRow,
  type WorkingSet,
} from '../../projections/persons/personsFold.ts';
import type { RecordedEvent } from '../../src/core/event.ts';

/** Exactly the events the persons projection folds (its `filter`), so a replay reproduces it. */
export const PERSON_LOG_TYPES: readonly string[] = ['EventCaptured', ...personEventTypes];

/**
 * Event time, the cut-off basis of time travel: the skew-corrected `timestamp` of a captured event,
 * `at` (when the command was decided) of a person management event.
 */
export function eventTimeOf(event: RecordedEvent): string {
  return event.type === 'EventCaptured'
    ? (event.data as EventCapturedData).timestamp
    : (event as unknown as PersonEvent).data.at;
}

export const projectOf = (event: RecordedEvent): number =>
  (event.data as { projectId: number }).projectId;
export const distinctIdOf = (event: RecordedEvent): string =>
  (event.data as { distinctId: string }).distinctId;
/** `$pageview` etc. for captured events, the fact's type for management events */
export const eventNameOf = (event: RecordedEvent): string =>
  event.type === 'EventCaptured' ? (event.data as EventCapturedData).event : event.type;

/**
 * The fold keeps bookkeeping for the projection's save step (dirty sets, warnings); a replay that
 * never saves drops it after each event so memory stays O(persons), not O(log).
 */
export function forgetBookkeeping(ws: WorkingSet): void {
  ws.dirtyPersons.clear();
  ws.deletedPersons.clear();
  ws.dirtyMappings.clear();
  ws.dirtyGroups.clear();
  ws.newGroupTypes.length = 0;
  ws.warnings.length = 0;
  ws.createdPersons.length = 0;
  ws.links.length = 0;
}

/** A person's public integer id and uuid, as the live read model shows them. */
export type Identity = { id: number; uuid: string };

/**
 * How a replay names the persons its fold creates. Over the whole log the fold's own numbering is
 * the live one (`ownIdentity`); over a slice of the log (one person's streams) it is not, and the
 * identities come from the read model, by the position and distinct id of the creating event.
 */
export type IdentityOf = (created: PersonCreated) => Identity;
export const ownIdentity: IdentityOf = (c) => ({ id: c.id, uuid: c.uuid });

/** The live fold of a replay: every event, and the public identity of each person it created. */
export class LiveFold {
  readonly ws: WorkingSet = emptyWorkingSet();
  private readonly identities = new Map<number, Identity>();

  constructor(private readonly identityOf: IdentityOf = ownIdentity) {}

  apply(event: RecordedEvent): void {
    applyToWorkingSet(this.ws, event);
    for (const c of this.ws.createdPersons) this.identities.set(c.id, this.identityOf(c));
    forgetBookkeeping(this.ws);
  }

  identity = (p: PersonRow): Identity => this.identities.get(p.id) ?? { id: p.id, uuid: p.uuid };
}
