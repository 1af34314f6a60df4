import { describe, expect, it } from 'vitest';
import {
  applyToWorkingSet,
  emptyWorkingSet,
  groupKeyOf,
  keysOf,
  MAX_GROUP_TYPES,
  mappingKey,
  PERSON_UUID_NAMESPACE,
  type PersonRow,
  personUuidFor,
  type WorkingSet,
} from '../../../projections/persons/personsFold.ts';
import { uuidv5 } from '../../../src/core/uuidv5.ts';
import { captured, identify, log, managed, T } from '../../support/personLog.ts';

/**
 * The persons fold on hand-made events, without a database: what `personsProjection` does to its
 * working set per event (docs/ARCHITECTURE.md, "Persons"), rule by rule.
 */

const fold = (...drafts: Parameters<typeof log>): WorkingSet => {
  const ws = emptyWorkingSet();
  for (const e of log(...drafts)) applyToWorkingSet(ws, e);
  return ws;
};

const personOf = (ws: WorkingSet, distinctId: string, projectId = 1): PersonRow | undefined => {
  const id = ws.mapping.get(mappingKey(projectId, distinctId));
  return id === null || id === undefined ? undefined : ws.persons.get(id);
};

describe('persons fold: creating and updating a person', () => {
  it('the first event of a distinct id creates its person: $set_once then $set, the creator uuid, the event time, id 1', () => {
    const ws = fold(
      captured({
        distinctId: 'anon',
        ts: T(1),
        uuid: 'ev-1',
        set: { plan: 'free', a: 'set' },
        setOnce: { a: 'once', first: 'jan' },
      }),
    );
    expect(personOf(ws, 'anon')).toEqual({
      id: 1,
      uuid: personUuidFor(1, 'anon'),
      projectId: 1,
      properties: { a: 'set', first: 'jan', plan: 'free', $creator_event_uuid: 'ev-1' },
      isIdentified: false,
      createdAt: T(1),
      version: 0,
      distinctIds: ['anon'],
    });
    expect(ws.nextPersonId).toBe(2);
    expect(ws.mappingOrds.get(mappingKey(1, 'anon'))).toBe(1);
    expect(ws.nextOrd).toBe(2);
    expect([...ws.dirtyPersons]).toEqual([1]);
    expect([...ws.dirtyMappings]).toEqual([mappingKey(1, 'anon')]);
  });

  it('on a creating event $unset is not applied (the new person is {...$set_once, ...$set})', () => {
    const ws = fold(
      captured({
        distinctId: 'anon',
        ts: T(1),
        uuid: 'ev-1',
        set: { plan: 'free' },
        unset: ['plan'],
      }),
    );
    expect(personOf(ws, 'anon')!.properties).toEqual({ plan: 'free', $creator_event_uuid: 'ev-1' });
  });

  it('updates apply $set_once (only absent keys; a stored null counts), then $set, then $unset: set and unset at once ends unset', () => {
    const ws = fold(
      captured({ distinctId: 'anon', ts: T(1), uuid: 'ev-1', set: { plan: 'free', gone: null } }),
      captured({
        distinctId: 'anon',
        ts: T(2),
        setOnce: { plan: 'never', gone: 'never', source: 'ad' },
        set: { plan: 'pro', temp: 1 },
        unset: ['temp'],
      }),
    );
    const person = personOf(ws, 'anon')!;
    expect(person.properties).toEqual({
      plan: 'pro',
      gone: null,
      source: 'ad',
      $creator_event_uuid: 'ev-1',
    });
    expect(person.version).toBe(1);
    expect(person.createdAt).toBe(T(1)); // an update never moves created_at
  });

  it('an event that changes nothing keeps the same properties object and version', () => {
    const ws = fold(
      captured({ distinctId: 'anon', ts: T(1), uuid: 'ev-1', set: { plan: 'free' } }),
    );
    const before = personOf(ws, 'anon')!.properties;
    ws.dirtyPersons.clear();
    for (const e of log(
      captured({
        distinctId: 'anon',
        ts: T(2),
        set: { plan: 'free' },
        setOnce: { plan: 'x' },
        unset: ['missing'],
      }),
    ))
      applyToWorkingSet(ws, e);
    expect(personOf(ws, 'anon')!.properties).toBe(before);
    expect(personOf(ws, 'anon')!.version).toBe(0);
    expect(ws.dirtyPersons.size).toBe(0);
  });

  it('$exception and $$heatmap create an empty person and never change one', () => {
    const ws = fold(
      captured({ distinctId: 'crash', ts: T(1), event: '$exception', set: { plan: 'free' } }),
      captured({ distinctId: 'anon', ts: T(1), uuid: 'ev-1', set: { plan: 'free' } }),
      captured({ distinctId: 'anon', ts: T(2), event: '$$heatmap', set: { plan: 'pro' } }),
    );
    expect(personOf(ws, 'crash')!.properties).toEqual({});
    expect(personOf(ws, 'anon')!.properties).toEqual({ plan: 'free', $creator_event_uuid: 'ev-1' });
  });

  it('a personless event ($process_person_profile: false) touches no person and no group type', () => {
    const ws = fold(
      captured({
        distinctId: 'anon',
        ts: T(1),
        set: { plan: 'free' },
        properties: { $process_person_profile: false, $groups: { company: 'acme' } },
      }),
    );
    expect(ws.persons.size).toBe(0);
    expect(ws.mapping.size).toBe(0);
    expect(ws.groupTypes.size).toBe(0);
    expect(ws.nextPersonId).toBe(1);
  });
});

describe('persons fold: merges', () => {
  it("$identify merges the anonymous person into the identified id's person: {...other, ...target}, earliest created_at, ids moved after the target's own", () => {
    const ws = fold(
      captured({ distinctId: 'anon', ts: T(1), uuid: 'a', set: { plan: 'free', color: 'red' } }),
      captured({
        distinctId: 'user',
        ts: T(2),
        uuid: 'u',
        set: { plan: 'trial', email: 'u@example.com' },
      }),
      identify('user', 'anon', T(3), { set: { name: 'Ursula' } }),
    );
    const user = personOf(ws, 'user')!;
    expect(personOf(ws, 'anon')).toBe(user);
    expect(user).toMatchObject({
      id: 2,
      uuid: personUuidFor(1, 'user'),
      isIdentified: true,
      createdAt: T(1),
      distinctIds: ['user', 'anon'],
      properties: {
        plan: 'trial',
        color: 'red',
        email: 'u@example.com',
        name: 'Ursula',
        $creator_event_uuid: 'u',
      },
    });
    expect(ws.persons.has(1)).toBe(false);
    expect(ws.deletedPersons.has(1)).toBe(true);
    // anon was attached again: it takes a new order stamp, after user's
    expect(ws.mappingOrds.get(mappingKey(1, 'anon'))).toBeGreaterThan(
      ws.mappingOrds.get(mappingKey(1, 'user'))!,
    );
  });

  it('$identify of an unknown id with a known anonymous id attaches it to the anonymous person, which becomes identified', () => {
    const ws = fold(
      captured({ distinctId: 'anon', ts: T(1), uuid: 'a' }),
      identify('user', 'anon', T(2)),
    );
    const person = personOf(ws, 'user')!;
    expect(person).toMatchObject({
      id: 1,
      uuid: personUuidFor(1, 'anon'),
      isIdentified: true,
      distinctIds: ['anon', 'user'],
    });
    expect(ws.persons.size).toBe(1);
  });

  it("$create_alias with neither id known creates one identified person holding both, with the uuid of the event's id", () => {
    const ws = fold(
      captured({
        distinctId: 'user',
        ts: T(1),
        uuid: 'ev',
        event: '$create_alias',
        properties: { alias: 'legacy' },
        set: { plan: 'free' },
      }),
    );
    const person = personOf(ws, 'user')!;
    expect(personOf(ws, 'legacy')).toBe(person);
    expect(person).toMatchObject({
      id: 1,
      uuid: personUuidFor(1, 'user'),
      isIdentified: true,
      distinctIds: ['user', 'legacy'],
      properties: { plan: 'free', $creator_event_uuid: 'ev' },
    });
  });

  it('an already identified other person is not merged (warning), unless $merge_dangerously; the target is identified either way', () => {
    const setup = [
      identify('alice', 'anon-a', T(1)), // alice: identified
      captured({ distinctId: 'bob', ts: T(2), uuid: 'b' }),
    ] as const;
    const refused = fold(...setup, identify('bob', 'alice', T(3)));
    expect(personOf(refused, 'bob')).not.toBe(personOf(refused, 'alice'));
    expect(personOf(refused, 'bob')!.isIdentified).toBe(true);
    expect(refused.warnings).toEqual([
      expect.objectContaining({
        projectId: 1,
        type: 'cannot_merge_already_identified',
        details: { sourcePersonDistinctId: 'alice', targetPersonDistinctId: 'bob' },
      }),
    ]);

    const dangerous = fold(
      ...setup,
      captured({
        distinctId: 'bob',
        ts: T(3),
        event: '$merge_dangerously',
        properties: { alias: 'alice' },
      }),
    );
    expect(personOf(dangerous, 'alice')).toBe(personOf(dangerous, 'bob'));
    expect(personOf(dangerous, 'bob')!.distinctIds).toEqual(['bob', 'alice', 'anon-a']);
    expect(dangerous.warnings).toEqual([]);
  });

  it("an illegal distinct id is never merged on: warning, and the event's own person is created unidentified", () => {
    const ws = fold(identify('user', 'anonymous', T(1)));
    expect(ws.warnings).toEqual([
      expect.objectContaining({
        type: 'cannot_merge_with_illegal_distinct_id',
        details: { illegalDistinctId: 'anonymous', otherDistinctId: 'anonymous' },
      }),
    ]);
    expect(personOf(ws, 'anonymous')).toBeUndefined();
    expect(personOf(ws, 'user')).toMatchObject({ isIdentified: false, distinctIds: ['user'] });
  });
});

describe('persons fold: groups', () => {
  it('$groups gives group types indexes 0–4 in order of first sight, per project; a sixth type gets none', () => {
    const types = ['company', 'project', 'team', 'org', 'region', 'sixth'];
    const ws = fold(
      captured({
        distinctId: 'u',
        ts: T(1),
        properties: { $groups: { company: 'acme', project: 'p1' } },
      }),
      captured({
        distinctId: 'u',
        ts: T(2),
        properties: { $groups: Object.fromEntries(types.map((t) => [t, 'x'])) },
      }),
      captured({ distinctId: 'v', ts: T(2), projectId: 2, properties: { $groups: { team: 't' } } }),
    );
    expect(Object.fromEntries(ws.groupTypes.get(1)!)).toEqual({
      company: 0,
      project: 1,
      team: 2,
      org: 3,
      region: 4,
    });
    expect(ws.groupTypes.get(1)!.size).toBe(MAX_GROUP_TYPES);
    expect(Object.fromEntries(ws.groupTypes.get(2)!)).toEqual({ team: 0 });
    expect(ws.newGroupTypes.map((t) => `${t.projectId}:${t.groupType}:${t.index}`)).toEqual([
      '1:company:0',
      '1:project:1',
      '1:team:2',
      '1:org:3',
      '1:region:4',
      '2:team:0',
    ]);
  });

  it('$groupidentify creates the group or applies $group_set to it, and touches no person', () => {
    const groupidentify = (ts: string, set: Record<string, unknown>) =>
      captured({
        distinctId: 'u',
        ts,
        event: '$groupidentify',
        properties: { $group_type: 'company', $group_key: 'acme', $group_set: set },
      });
    const ws = fold(
      groupidentify(T(1), { name: 'Acme', size: 10 }),
      groupidentify(T(2), { size: 12 }),
    );
    expect(ws.groups.get(groupKeyOf(1, 0, 'acme'))).toEqual({
      projectId: 1,
      groupTypeIndex: 0,
      groupKey: 'acme',
      properties: { name: 'Acme', size: 12 },
      createdAt: T(1),
      version: 1,
    });
    expect(ws.persons.size).toBe(0);
  });
});

describe('persons fold: person management events', () => {
  it('find the person by the distinct id they carry; after a delete that id has none, and a later management event does nothing', () => {
    const ws = fold(
      captured({ distinctId: 'anon', ts: T(1), uuid: 'a', set: { plan: 'free', color: 'red' } }),
      managed('PersonPropertiesUpdated', 'anon', T(2), { set: { plan: 'pro' } }),
      managed('PersonPropertyDeleted', 'anon', T(3), { key: 'color' }),
    );
    expect(personOf(ws, 'anon')).toMatchObject({
      properties: { plan: 'pro', $creator_event_uuid: 'a' },
      version: 2,
    });
    for (const e of log(
      managed('PersonDeleted', 'anon', T(4), { distinctIds: ['anon'], deleteEvents: false }),
      managed('PersonPropertiesUpdated', 'anon', T(5), { set: { plan: 'gone' } }),
    ))
      applyToWorkingSet(ws, e);
    expect(ws.mapping.get(mappingKey(1, 'anon'))).toBeNull();
    expect(ws.persons.size).toBe(0);
  });

  it("a deleted person's distinct id seen again makes a new person: next integer id, the same uuid", () => {
    const ws = fold(
      captured({ distinctId: 'anon', ts: T(1) }),
      managed('PersonDeleted', 'anon', T(2), { distinctIds: ['anon'], deleteEvents: false }),
      captured({ distinctId: 'anon', ts: T(3), uuid: 'again' }),
    );
    expect(personOf(ws, 'anon')).toMatchObject({
      id: 2,
      uuid: personUuidFor(1, 'anon'),
      createdAt: T(3),
      properties: { $creator_event_uuid: 'again' },
    });
  });

  it('a split gives every other id a fresh empty person; a uuid still held by a live person is replaced by one derived from it', () => {
    const ws = fold(
      captured({ distinctId: 'anon', ts: T(1), uuid: 'a', set: { plan: 'free' } }),
      identify('user', 'anon', T(2)), // user joins anon's person, which keeps anon's uuid
      managed('PersonSplit', 'user', T(3), {
        keepDistinctId: 'user',
        splitDistinctIds: ['anon'],
        wipeProperties: false,
      }),
    );
    const kept = personOf(ws, 'user')!;
    const split = personOf(ws, 'anon')!;
    expect(kept).toMatchObject({
      id: 1,
      uuid: personUuidFor(1, 'anon'),
      distinctIds: ['user'],
      properties: { plan: 'free', $creator_event_uuid: 'a' },
    });
    // anon's own uuid is kept's: the new person gets uuidv5("<uuid>:<next id>")
    expect(split).toMatchObject({
      id: 2,
      uuid: uuidv5(`${personUuidFor(1, 'anon')}:3`, PERSON_UUID_NAMESPACE),
      distinctIds: ['anon'],
      properties: {},
      isIdentified: false,
      createdAt: T(1),
      version: kept.version,
    });
  });

  it('keysOf names every distinct id and group an event needs loaded', () => {
    const [ident, group, split] = log(
      identify('user', 'anon', T(1), { properties: { alias: 'legacy' } }),
      captured({
        distinctId: 'u',
        ts: T(1),
        event: '$groupidentify',
        properties: { $group_type: 'company', $group_key: 'acme' },
      }),
      managed('PersonSplit', 'user', T(2), {
        keepDistinctId: 'user',
        splitDistinctIds: ['a', 'b'],
        wipeProperties: true,
      }),
    );
    expect(keysOf(ident!)).toEqual({
      distinctIds: [
        [1, 'user'],
        [1, 'anon'],
        [1, 'legacy'],
      ],
      groups: [],
    });
    expect(keysOf(group!)).toEqual({ distinctIds: [[1, 'u']], groups: [[1, 'company', 'acme']] });
    expect(keysOf(split!).distinctIds).toEqual([
      [1, 'user'],
      [1, 'a'],
      [1, 'b'],
      [1, 'user'],
    ]);
  });
});

describe('person properties limit', () => {
  it('adds no key past MAX_PERSON_PROPERTIES, still updates existing keys, and warns', async () => {
    const { applyPersonUpdate, MAX_PERSON_PROPERTIES } = await import(
      '../../../projections/persons/personUpdates.ts'
    );
    const full = Object.fromEntries(
      Array.from({ length: MAX_PERSON_PROPERTIES }, (_, i) => [`k${i}`, i]),
    );
    const next = applyPersonUpdate(full, {
      set: { k0: 'changed', extra: 1 },
      setOnce: { other: 2 },
      unset: [],
    });
    expect(next.k0).toBe('changed');
    expect('extra' in next).toBe(false);
    expect('other' in next).toBe(false);
    expect(Object.keys(next)).toHaveLength(MAX_PERSON_PROPERTIES);
    const room = applyPersonUpdate({ a: 1 }, { set: { b: 2 }, setOnce: {}, unset: ['a'] });
    expect(room).toEqual({ b: 2 });

    // MAX - 2 keys, plus $creator_event_uuid: room for exactly one more
    const many = Object.fromEntries(
      Array.from({ length: MAX_PERSON_PROPERTIES - 2 }, (_, i) => [`p${i}`, i]),
    );
    const ws = fold(
      captured({ distinctId: 'big', ts: T(1), uuid: 'ev-big-1', set: many }),
      captured({ distinctId: 'big', ts: T(2), uuid: 'ev-big-2', set: { last: 1, over: 2 } }),
    );
    const person = personOf(ws, 'big')!;
    expect('last' in person.properties).toBe(true);
    expect('over' in person.properties).toBe(false);
    expect(ws.warnings.map((w) => w.type)).toContain('person_properties_limit_exceeded');
  });
});
