import { describe, it } from 'vitest';
import type {
  PersonDeleted,
  PersonEventsDeleted,
} from '../../../commands/persons/model/personEvents.ts';
import {
  type DeletePerson,
  type DeletePersonProperty,
  type PersonFacts,
  personDecider,
  type SplitPerson,
  type UpdatePersonProperties,
} from '../../../commands/persons/personDecider.ts';
import { DeciderSpecification } from '../../support/deciderSpec.ts';

const given = DeciderSpecification.for(personDecider);

const PROJECT = 1;
const UUID = '0190a0b0-0000-7000-8000-000000000001';
const AT = '2024-05-01T10:00:00.000Z';
const person = (overrides: Partial<NonNullable<PersonFacts>> = {}): NonNullable<PersonFacts> => ({
  id: 7,
  uuid: UUID,
  distinctIds: ['anon-1', 'user@example.com', 'device-2'],
  properties: { email: 'user@example.com', plan: 'free', tags: ['a'] },
  ...overrides,
});
const base = { projectId: PROJECT, personUuid: UUID, distinctId: 'anon-1', at: AT, personId: 7 };

const update = (
  set: Record<string, unknown>,
  facts: PersonFacts = person(),
): UpdatePersonProperties => ({
  type: 'UpdatePersonProperties',
  projectId: PROJECT,
  person: facts,
  at: AT,
  set,
});
const deleteProperty = (key: string, facts: PersonFacts = person()): DeletePersonProperty => ({
  type: 'DeletePersonProperty',
  projectId: PROJECT,
  person: facts,
  at: AT,
  key,
});
const split = (mainDistinctId?: string, facts: PersonFacts = person()): SplitPerson => ({
  type: 'SplitPerson',
  projectId: PROJECT,
  person: facts,
  at: AT,
  ...(mainDistinctId !== undefined ? { mainDistinctId } : {}),
});
const remove = (deleteEvents: boolean, facts: PersonFacts = person()): DeletePerson => ({
  type: 'DeletePerson',
  projectId: PROJECT,
  person: facts,
  at: AT,
  deleteEvents,
});

const deleted: PersonDeleted = {
  type: 'PersonDeleted',
  data: { ...base, distinctIds: ['anon-1', 'user@example.com', 'device-2'], deleteEvents: false },
};

describe('person decider', () => {
  describe('UpdatePersonProperties', () => {
    it('records only the keys whose value changes, with their values before', () => {
      given([])
        .when(update({ plan: 'paid', email: 'user@example.com', seats: 3 }))
        .then([
          {
            type: 'PersonPropertiesUpdated',
            data: { ...base, set: { plan: 'paid', seats: 3 }, before: { plan: 'free' } },
          },
        ]);
    });
    it('compares values deeply: an equal array is no change, a different one is', () => {
      given([])
        .when(update({ tags: ['a'] }))
        .thenNothing();
      given([])
        .when(update({ tags: ['a', 'b'] }))
        .then([
          {
            type: 'PersonPropertiesUpdated',
            data: { ...base, set: { tags: ['a', 'b'] }, before: { tags: ['a'] } },
          },
        ]);
    });
    it('sets null as a value (a stored null differs from an absent key)', () => {
      given([])
        .when(update({ plan: null }))
        .then([
          {
            type: 'PersonPropertiesUpdated',
            data: { ...base, set: { plan: null }, before: { plan: 'free' } },
          },
        ]);
      given([])
        .when(update({ x: null }, person({ properties: { x: null } })))
        .thenNothing();
    });
    it('an empty set changes nothing', () => {
      given([]).when(update({})).thenNothing();
    });
    it('fails with not_found for an unknown person', () => {
      given([])
        .when(update({ plan: 'paid' }, null))
        .thenFails({ kind: 'not_found' });
    });
  });

  describe('DeletePersonProperty', () => {
    it('deletes a key the person has, naming the person by its oldest distinct id', () => {
      given([])
        .when(deleteProperty('plan'))
        .then([{ type: 'PersonPropertyDeleted', data: { ...base, key: 'plan', before: 'free' } }]);
    });
    it('a key the person does not have is a no-op', () => {
      given([]).when(deleteProperty('missing')).thenNothing();
    });
    it('refuses an empty key', () => {
      given([]).when(deleteProperty('')).thenFails({ kind: 'validation', attr: '$unset' });
    });
  });

  describe('SplitPerson', () => {
    it('without a main id keeps the oldest distinct id and wipes the properties', () => {
      given([])
        .when(split())
        .then([
          {
            type: 'PersonSplit',
            data: {
              ...base,
              keepDistinctId: 'anon-1',
              splitDistinctIds: ['user@example.com', 'device-2'],
              wipeProperties: true,
            },
          },
        ]);
    });
    it('with a main id keeps that one (and the properties), splitting every other', () => {
      given([])
        .when(split('user@example.com'))
        .then([
          {
            type: 'PersonSplit',
            data: {
              ...base,
              distinctId: 'user@example.com',
              keepDistinctId: 'user@example.com',
              splitDistinctIds: ['anon-1', 'device-2'],
              wipeProperties: false,
            },
          },
        ]);
    });
    it('refuses a main id the person does not have', () => {
      given([]).when(split('stranger')).thenFails({ kind: 'validation', attr: 'main_distinct_id' });
    });
  });

  describe('DeletePerson', () => {
    it('deletes the person with all its distinct ids', () => {
      given([]).when(remove(false)).then([deleted]);
    });
    it('with delete_events also queues the deletion of its events', () => {
      given([])
        .when(remove(true))
        .then([
          { type: 'PersonDeleted', data: { ...deleted.data, deleteEvents: true } },
          {
            type: 'PersonEventsDeletionQueued',
            data: {
              projectId: PROJECT,
              personUuid: UUID,
              personId: 7,
              distinctIds: ['anon-1', 'user@example.com', 'device-2'],
              at: AT,
            },
          },
        ]);
    });
  });

  describe('the person stream', () => {
    it('a person this stream deleted is not found any more (a retried concurrent command)', () => {
      given([deleted]).when(remove(false)).thenFails({ kind: 'not_found' });
      given([deleted])
        .when(update({ plan: 'paid' }))
        .thenFails({ kind: 'not_found' });
      given([deleted]).when(split()).thenFails({ kind: 'not_found' });
    });
    it('a new person that got the same uuid back (new integer id) is not blocked by the old deletion', () => {
      const events: PersonEventsDeleted = {
        type: 'PersonEventsDeleted',
        data: {
          projectId: PROJECT,
          personUuid: UUID,
          distinctIds: ['anon-1'],
          queuedEventId: 'q',
          upToPosition: '10',
          at: AT,
        },
      };
      given([deleted, events])
        .when(deleteProperty('plan', person({ id: 8 })))
        .then([
          {
            type: 'PersonPropertyDeleted',
            data: { ...base, personId: 8, key: 'plan', before: 'free' },
          },
        ]);
    });
  });
});
