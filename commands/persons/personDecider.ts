import { isDeepStrictEqual } from 'node:util';
import type { Decider } from '../../src/core/decider.ts';
import { type DomainError, notFound, validation } from '../../src/core/errors.ts';
import type {
  PersonDeleted,
  PersonEvent,
  PersonEventDeletionEvent,
  PersonEventsDeletionQueued,
  PersonPropertiesUpdated,
  PersonPropertyDeleted,
  PersonSplit,
} from './model/personEvents.ts';

/**
 * What the persons read model showed when the command was decided. Persons are a fold of every
 * captured event, so the decision reads them there instead of re-folding the log; `null` = no
 * such person in the project.
 */
export type PersonFacts = Readonly<{
  id: number;
  uuid: string;
  /** oldest first */
  distinctIds: readonly string[];
  properties: Readonly<Record<string, unknown>>;
}> | null;

type Common = { projectId: number; person: PersonFacts; at: string };
export type UpdatePersonProperties = Common & {
  type: 'UpdatePersonProperties';
  set: Record<string, unknown>;
};
export type DeletePersonProperty = Common & { type: 'DeletePersonProperty'; key: string };
export type SplitPerson = Common & { type: 'SplitPerson'; mainDistinctId?: string };
export type DeletePerson = Common & { type: 'DeletePerson'; deleteEvents: boolean };
export type PersonCommand =
  | UpdatePersonProperties
  | DeletePersonProperty
  | SplitPerson
  | DeletePerson;

export type PersonStreamEvent = PersonEvent | PersonEventDeletionEvent;

/**
 * From the person's stream (`person-<project>:<uuid>`): the integer ids it has deleted. A person
 * uuid comes back when a deleted person's distinct id is seen again (the uuid is derived from it),
 * but the new person gets a new integer id; so a retried command (a concurrent DELETE won the
 * append) is refused for the person it deleted, and never for a later one.
 */
export type PersonStreamState = Readonly<{ deletedPersonIds: readonly number[] }>;

const initialState = (): PersonStreamState => ({ deletedPersonIds: [] });

const evolve = (state: PersonStreamState, event: PersonStreamEvent): PersonStreamState =>
  event.type === 'PersonDeleted' && event.data.personId !== undefined
    ? { deletedPersonIds: [...state.deletedPersonIds, event.data.personId] }
    : state;

type Present = NonNullable<PersonFacts>;
const base = (c: PersonCommand, p: Present, distinctId = p.distinctIds[0]!) => ({
  projectId: c.projectId,
  personUuid: p.uuid,
  distinctId,
  at: c.at,
  personId: p.id,
});

function decide(
  command: PersonCommand,
  state: PersonStreamState,
): readonly PersonStreamEvent[] | DomainError {
  const p = command.person;
  if (!p || state.deletedPersonIds.includes(p.id) || p.distinctIds.length === 0) return notFound();
  switch (command.type) {
    case 'UpdatePersonProperties': {
      // Only keys whose value changes: a PATCH repeating the stored values records nothing.
      const changed = Object.entries(command.set).filter(
        ([k, v]) => !(k in p.properties) || !isDeepStrictEqual(p.properties[k], v),
      );
      if (changed.length === 0) return [];
      const before = Object.fromEntries(
        changed.filter(([k]) => k in p.properties).map(([k]) => [k, p.properties[k]]),
      );
      const event: PersonPropertiesUpdated = {
        type: 'PersonPropertiesUpdated',
        data: { ...base(command, p), set: Object.fromEntries(changed), before },
      };
      return [event];
    }
    case 'DeletePersonProperty': {
      if (command.key === '')
        return validation('invalid_input', 'The property key must not be empty.', '$unset');
      if (!(command.key in p.properties)) return [];
      const event: PersonPropertyDeleted = {
        type: 'PersonPropertyDeleted',
        data: { ...base(command, p), key: command.key, before: p.properties[command.key] },
      };
      return [event];
    }
    case 'SplitPerson': {
      const main = command.mainDistinctId;
      if (main !== undefined && !p.distinctIds.includes(main)) {
        return validation(
          'invalid_input',
          `"${main}" is not a distinct id of this person.`,
          'main_distinct_id',
        );
      }
      // Without a main id the oldest stays and the properties are wiped (capture.md §3.7).
      const keep = main ?? p.distinctIds[0]!;
      const event: PersonSplit = {
        type: 'PersonSplit',
        data: {
          ...base(command, p, keep),
          keepDistinctId: keep,
          splitDistinctIds: p.distinctIds.filter((d) => d !== keep),
          wipeProperties: main === undefined,
        },
      };
      return [event];
    }
    case 'DeletePerson': {
      const deleted: PersonDeleted = {
        type: 'PersonDeleted',
        data: {
          ...base(command, p),
          distinctIds: [...p.distinctIds],
          deleteEvents: command.deleteEvents,
        },
      };
      if (!command.deleteEvents) return [deleted];
      const queued: PersonEventsDeletionQueued = {
        type: 'PersonEventsDeletionQueued',
        data: {
          projectId: command.projectId,
          personUuid: p.uuid,
          personId: p.id,
          distinctIds: [...p.distinctIds],
          at: command.at,
        },
      };
      return [deleted, queued];
    }
  }
}

export const personDecider: Decider<PersonStreamState, PersonCommand, PersonStreamEvent> = {
  initialState,
  evolve,
  decide,
};
