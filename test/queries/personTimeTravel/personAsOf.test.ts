import { afterEach, describe, expect, it } from 'vitest';
import { parsePersonRef } from '../../../commands/persons/model/personRef.ts';
import {
  applyToWorkingSet,
  emptyWorkingSet,
  personUuidFor,
} from '../../../projections/persons/personsFold.ts';
import {
  type PersonRef,
  personAsOf,
  personAsOfEvents,
} from '../../../queries/personTimeTravel/personAsOf.ts';
import { captured, identify, log, managed, sliceDeps, T } from '../../support/personLog.ts';

const byDistinct = (distinctId: string): PersonRef => ({ kind: 'distinct_id', distinctId });
type Asked = { events: ReturnType<typeof log>; ref: PersonRef; at: string; projectId: number };
const asked: Asked[] = [];
/** The fold over the whole log (the reference); every answer is also checked on the person's slice below. */
const asOf = (events: ReturnType<typeof log>, ref: PersonRef, at: string, projectId = 1) => {
  asked.push({ events, ref, at, projectId });
  return personAsOfEvents(events, projectId, ref, at);
};
// What the server runs: the same fold over only the person's streams, ids from the read model's index.
afterEach(async () => {
  for (const { events, ref, at, projectId } of asked.splice(0)) {
    expect(
      await personAsOf(sliceDeps(events), projectId, ref, at),
      `${JSON.stringify(ref)} as of ${at} in project ${projectId}, from its slice of the log`,
    ).toEqual(personAsOfEvents(events, projectId, ref, at));
  }
});

describe('a person as of a time (pure fold over a hand-made log)', () => {
  const U = { anon: 'u0000001-anon' };
  const events = log(
    captured({
      distinctId: 'anon',
      ts: T(1),
      uuid: U.anon,
      set: { plan: 'free', color: 'red' },
      setOnce: { first: 'jan' },
    }),
    captured({ distinctId: 'anon', ts: T(2), event: '$set', set: { plan: 'pro' } }),
    captured({
      distinctId: 'anon',
      ts: T(3),
      event: '$set',
      set: { color: 'blue' },
      setOnce: { first: 'never', source: 'ad' },
    }),
    captured({ distinctId: 'anon', ts: T(4), unset: ['color'] }),
  );

  it('is absent before its first event, and each cut-off sees exactly the events at or before it', () => {
    expect(asOf(events, byDistinct('anon'), '2023-12-31T00:00:00Z')).toBeNull();
    const at = (ts: string) => asOf(events, byDistinct('anon'), ts)!.properties;
    // inclusive: the creating event's own timestamp already counts
    expect(at(T(1))).toEqual({
      plan: 'free',
      color: 'red',
      first: 'jan',
      $creator_event_uuid: U.anon,
    });
    expect(at('2024-01-02T09:59:59.999Z')).toEqual({
      plan: 'free',
      color: 'red',
      first: 'jan',
      $creator_event_uuid: U.anon,
    });
    expect(at(T(2))).toEqual({
      plan: 'pro',
      color: 'red',
      first: 'jan',
      $creator_event_uuid: U.anon,
    });
    expect(at(T(3, 12))).toEqual({
      plan: 'pro',
      color: 'blue',
      first: 'jan',
      source: 'ad',
      $creator_event_uuid: U.anon,
    });
    expect(at(T(9))).toEqual({
      plan: 'pro',
      first: 'jan',
      source: 'ad',
      $creator_event_uuid: U.anon,
    });
  });

  it('answers in the persons read view with the live id and uuid and created_at from the first event', () => {
    expect(asOf(events, byDistinct('anon'), T(2))).toEqual({
      id: 1,
      uuid: personUuidFor(1, 'anon'),
      name: 'anon',
      distinct_ids: ['anon'],
      properties: { plan: 'pro', color: 'red', first: 'jan', $creator_event_uuid: U.anon },
      is_identified: false,
      created_at: T(1),
    });
    expect(asOf(events, { kind: 'id', id: 1 }, T(2))!.properties.plan).toBe('pro');
    expect(
      asOf(events, { kind: 'uuid', uuid: personUuidFor(1, 'anon') }, T(2))!.properties.plan,
    ).toBe('pro');
    expect(asOf(events, { kind: 'id', id: 1 }, T(2), 2)).toBeNull(); // another project's id
  });
});

describe('merges as of a time', () => {
  const events = log(
    captured({ distinctId: 'anon', ts: T(1), uuid: 'a', set: { plan: 'free', color: 'red' } }),
    captured({
      distinctId: 'user',
      ts: T(2),
      uuid: 'u',
      set: { plan: 'trial', email: 'u@example.com' },
    }),
    identify('user', 'anon', T(3), { set: { name: 'Ursula' } }),
    captured({ distinctId: 'anon', ts: T(4), unset: ['color'] }),
  );

  it('before the merge: two persons, neither identified', () => {
    const anon = asOf(events, byDistinct('anon'), T(2, 12))!;
    const user = asOf(events, byDistinct('user'), T(2, 12))!;
    expect(anon).toMatchObject({
      id: 1,
      distinct_ids: ['anon'],
      is_identified: false,
      properties: { plan: 'free', color: 'red', $creator_event_uuid: 'a' },
    });
    expect(user).toMatchObject({
      id: 2,
      distinct_ids: ['user'],
      is_identified: false,
      created_at: T(2),
      name: 'u@example.com',
    });
  });

  it('at the merge: the identified id keeps its id and its values win; created_at is the earlier; the other person is gone', () => {
    const merged = asOf(events, byDistinct('anon'), T(3))!;
    expect(merged).toEqual({
      id: 2,
      uuid: personUuidFor(1, 'user'),
      name: 'u@example.com',
      distinct_ids: ['user', 'anon'],
      properties: {
        plan: 'trial',
        color: 'red',
        email: 'u@example.com',
        name: 'Ursula',
        $creator_event_uuid: 'u',
      },
      is_identified: true,
      created_at: T(1),
    });
    expect(asOf(events, { kind: 'id', id: 1 }, T(3))).toBeNull();
    expect(asOf(events, { kind: 'id', id: 1 }, T(2))).not.toBeNull(); // ...but it existed before
    expect(asOf(events, byDistinct('user'), T(5))!.properties).not.toHaveProperty('color');
  });
});

describe('late arrivals and the log order', () => {
  // plan=a stamped day 3 arrives first; plan=b stamped day 2 arrives later.
  const events = log(
    captured({ distinctId: 'p', ts: T(1), uuid: 'c', set: { plan: 'start' } }),
    captured({ distinctId: 'p', ts: T(3), set: { plan: 'a' } }),
    captured({
      distinctId: 'p',
      ts: T(2),
      set: { plan: 'b' },
      setOnce: { once: 'late' },
      receivedAt: T(5),
    }),
  );
  const plan = (ts: string) => asOf(events, byDistinct('p'), ts)!.properties.plan;

  it('a late event counts from its own timestamp on', () => {
    expect(plan(T(1, 12))).toBe('start');
    expect(plan(T(2, 12))).toBe('b');
    expect(asOf(events, byDistinct('p'), T(2, 12))!.properties.once).toBe('late');
  });

  it('and, being processed last, wins over a newer-stamped $set (last processed wins, not last stamped)', () => {
    expect(plan(T(3))).toBe('b');
    expect(plan(T(9))).toBe('b');
  });
});

describe('integer ids equal the live ones', () => {
  it('persons created in the log by events past the cut-off (any project) still hold their ids', () => {
    const events = log(
      captured({ distinctId: 'future', ts: T(20), projectId: 2 }), // live id 1, in another project
      captured({ distinctId: 'someone', ts: T(15) }), // live id 2
      captured({ distinctId: 'x', ts: T(1), set: { a: 1 } }), // live id 3
    );
    const x = asOf(events, byDistinct('x'), T(2))!;
    expect(x).toMatchObject({ id: 3, uuid: personUuidFor(1, 'x'), properties: { a: 1 } });
    expect(asOf(events, { kind: 'id', id: 3 }, T(2))!.distinct_ids).toEqual(['x']);
    expect(asOf(events, { kind: 'id', id: 2 }, T(2))).toBeNull(); // not created yet in event time
    expect(asOf(events, { kind: 'id', id: 1 }, T(21), 2)!.distinct_ids).toEqual(['future']);
  });

  it('a person deleted since is still there as of before the deletion, with its old id', () => {
    const events = log(
      captured({ distinctId: 'gone', ts: T(1), set: { a: 1 } }),
      managed('PersonPropertiesUpdated', 'gone', T(2), { set: { a: 2 } }),
      managed('PersonDeleted', 'gone', T(3), { distinctIds: ['gone'], deleteEvents: false }),
      captured({ distinctId: 'gone', ts: T(4) }), // comes back as a new person
    );
    expect(asOf(events, byDistinct('gone'), T(1, 12))).toMatchObject({
      id: 1,
      properties: { a: 1 },
    });
    expect(asOf(events, byDistinct('gone'), T(2, 12))).toMatchObject({
      id: 1,
      properties: { a: 2 },
    });
    expect(asOf(events, byDistinct('gone'), T(3, 12))).toBeNull();
    expect(asOf(events, byDistinct('gone'), T(4))).toMatchObject({ id: 2 });
    expect(asOf(events, { kind: 'id', id: 1 }, T(2, 12))).not.toBeNull();
  });

  it('as of the end of time equals the live fold the projection runs, person by person', () => {
    const events = log(
      captured({ distinctId: 'a', ts: T(5), set: { k: 'a1' } }),
      captured({ distinctId: 'b', ts: T(1), set: { k: 'b1', only_b: true } }),
      captured({ distinctId: 'c', ts: T(3), projectId: 2 }),
      identify('a', 'b', T(2), { set: { k: 'merged' } }),
      managed('PersonPropertyDeleted', 'b', T(6), { key: 'only_b' }),
      captured({
        distinctId: 'd',
        ts: T(4),
        event: '$create_alias',
        properties: { alias: 'e' },
        set: { d: 1 },
      }),
      managed('PersonSplit', 'd', T(7), {
        keepDistinctId: 'd',
        splitDistinctIds: ['e'],
        wipeProperties: false,
      }),
    );
    const live = emptyWorkingSet();
    for (const e of events) applyToWorkingSet(live, e);
    for (const p of live.persons.values()) {
      const view = asOf(events, { kind: 'id', id: p.id }, '9999-12-31T23:59:59Z', p.projectId)!;
      expect(view).toMatchObject({
        id: p.id,
        uuid: p.uuid,
        properties: p.properties,
        is_identified: p.isIdentified,
        created_at: p.createdAt,
      });
      expect([...view.distinct_ids].sort()).toEqual([...p.distinctIds].sort());
    }
    expect(live.persons.size).toBe(4);
  });
});

describe('path ids', () => {
  it('an integer is an id, a uuid a uuid (lower-cased), anything else nobody', () => {
    expect(parsePersonRef('42')).toEqual({ kind: 'id', id: 42 });
    expect(parsePersonRef('0190D7B3-5F1E-7C6A-9C8B-1A2B3C4D5E6F')).toEqual({
      kind: 'uuid',
      uuid: '0190d7b3-5f1e-7c6a-9c8b-1a2b3c4d5e6f',
    });
    expect(parsePersonRef('anon')).toBeNull();
  });
});
