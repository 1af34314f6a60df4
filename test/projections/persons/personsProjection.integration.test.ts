import { afterEach, describe, expect, it } from 'vitest';
import type { PersonsFoldEvent } from '../../../projections/persons/personsFold.ts';
import { personUuidFor } from '../../../projections/persons/personsFold.ts';
import { personsProjection } from '../../../projections/persons/personsProjection.ts';
import { personsReader } from '../../../projections/persons/personsReader.ts';
import type { RecordedEvent } from '../../../src/core/event.ts';
import { captured, identify, log, managed, T } from '../../support/personLog.ts';
import { type ProjectionSpec, projectionSpec } from '../../support/projectionSpec.ts';

const batch = (...drafts: Parameters<typeof log>) =>
  log(...drafts) as RecordedEvent<PersonsFoldEvent>[];

let spec: ProjectionSpec<PersonsFoldEvent> | undefined;
afterEach(async () => {
  await spec?.close();
  spec = undefined;
});

describe('persons projection: given log events → rows', () => {
  it('a merge across batches: the state the first batch saved is loaded by the second', async () => {
    spec = await projectionSpec(personsProjection);
    await spec.given(
      batch(
        captured({ distinctId: 'anon', ts: T(1), uuid: 'a', set: { plan: 'free' } }),
        captured({ distinctId: 'user', ts: T(2), uuid: 'u', set: { email: 'u@example.com' } }),
      ),
    );
    await spec.given(
      batch(identify('user', 'anon', T(3)), identify('user', 'anonymous', T(4), { uuid: 'bad' })),
    );

    expect(await spec.rows('persons')).toEqual([
      {
        id: 2,
        project_id: 1,
        uuid: personUuidFor(1, 'user'),
        properties: { plan: 'free', email: 'u@example.com', $creator_event_uuid: 'u' },
        is_identified: true,
        created_at: new Date(T(1)),
        version: 1,
      },
    ]);
    expect(await spec.rows('person_distinct_ids', 'ord')).toEqual([
      { project_id: 1, distinct_id: 'user', person_id: 2, ord: '2' },
      { project_id: 1, distinct_id: 'anon', person_id: 2, ord: '3' },
    ]);
    expect(await spec.rows('persons_counters')).toEqual([
      { name: 'ord', value: '4' },
      { name: 'person_id', value: '3' },
    ]);
    expect(await spec.rows('person_ingestion_warnings')).toMatchObject([
      {
        project_id: 1,
        type: 'cannot_merge_with_illegal_distinct_id',
        event_uuid: 'bad',
        details: { illegalDistinctId: 'anonymous', otherDistinctId: 'anonymous' },
      },
    ]);
  });

  it('the reader answers from those rows: a person by id or uuid, its distinct ids, summaries and group types', async () => {
    spec = await projectionSpec(personsProjection);
    await spec.given(
      batch(
        captured({
          distinctId: 'anon',
          ts: T(1),
          uuid: 'a',
          set: { name: 'Ann', plan: 'free' },
          properties: { $groups: { company: 'acme' } },
        }),
        identify('ann@example.com', 'anon', T(2)),
      ),
    );
    const reader = personsReader(spec.pool);
    const uuid = personUuidFor(1, 'anon');
    const person = await reader.getPerson(1, { kind: 'id', id: 1 });
    expect(person).toEqual({
      id: 1,
      uuid,
      properties: { name: 'Ann', plan: 'free', $creator_event_uuid: 'a' },
      is_identified: true,
      created_at: new Date(T(1)),
      distinct_ids: ['anon', 'ann@example.com'],
    });
    expect(await reader.getPerson(1, { kind: 'uuid', uuid })).toEqual(person);
    expect(await reader.getPerson(2, { kind: 'id', id: 1 })).toBeNull();
    expect(await reader.getPerson(1, { kind: 'id', id: 2 ** 31 })).toBeNull(); // past integer range: nobody, no SQL error
    expect(await reader.distinctIdsOf(1, { kind: 'uuid', uuid })).toEqual([
      'anon',
      'ann@example.com',
    ]);
    expect(
      Object.fromEntries(await reader.summariesForDistinctIds(1, ['ann@example.com', 'nobody'])),
    ).toEqual({
      'ann@example.com': {
        is_identified: true,
        distinct_ids: ['anon'],
        properties: { name: 'Ann' },
      },
    });
    expect(await reader.groupTypes(1)).toEqual([{ group_type: 'company', group_type_index: 0 }]);
  });

  it("time travel's index: every person ever created (merged away, split off) and every pair of ids a merge read", async () => {
    spec = await projectionSpec(personsProjection);
    const reader = personsReader(spec.pool);
    expect(await reader.identityIndexComplete()).toBe(true); // nothing yet
    const events = batch(
      captured({ distinctId: 'anon', ts: T(1) }),
      captured({ distinctId: 'user', ts: T(2) }),
      identify('user', 'anon', T(3)), // anon's person 1 merged away
      identify('user', 'null', T(4)), // illegal id: refused before any person is read, no link
      captured({ distinctId: 'other', ts: T(5), projectId: 2 }),
      captured({
        distinctId: 'x',
        ts: T(6),
        event: '$create_alias',
        properties: { alias: 'user' },
      }), // x joins user's person
      identify('user', 'y', T(6)), // y's person: none, y joins too
      managed('PersonSplit', 'user', T(7), {
        keepDistinctId: 'user',
        splitDistinctIds: ['user', 'anon'],
        wipeProperties: false,
      }),
    );
    await spec.given(events.slice(0, 5));
    await spec.given(events.slice(5));
    expect(await spec.rows('person_identities', 'id')).toEqual([
      { id: 1, project_id: 1, uuid: personUuidFor(1, 'anon'), distinct_id: 'anon', position: '1' },
      { id: 2, project_id: 1, uuid: personUuidFor(1, 'user'), distinct_id: 'user', position: '2' },
      {
        id: 3,
        project_id: 2,
        uuid: personUuidFor(2, 'other'),
        distinct_id: 'other',
        position: '5',
      },
      { id: 4, project_id: 1, uuid: personUuidFor(1, 'anon'), distinct_id: 'anon', position: '8' },
    ]);
    expect(await spec.rows('person_links', 'distinct_id, other_id')).toEqual([
      { project_id: 1, distinct_id: 'anon', other_id: 'user' },
      { project_id: 1, distinct_id: 'user', other_id: 'anon' },
      { project_id: 1, distinct_id: 'user', other_id: 'x' },
      { project_id: 1, distinct_id: 'user', other_id: 'y' },
      { project_id: 1, distinct_id: 'x', other_id: 'user' },
      { project_id: 1, distinct_id: 'y', other_id: 'user' },
    ]);
    expect(await reader.identitiesByRef(1, { kind: 'id', id: 1 })).toEqual([
      { id: 1, uuid: personUuidFor(1, 'anon'), distinctId: 'anon', position: 1n },
    ]);
    expect(await reader.identitiesByRef(2, { kind: 'id', id: 1 })).toEqual([]);
    expect(
      (await reader.identitiesByRef(1, { kind: 'uuid', uuid: personUuidFor(1, 'anon') })).map(
        (i) => i.id,
      ),
    ).toEqual([1, 4]);
    expect((await reader.identitiesCreatedFor(1, ['anon', 'x'])).map((i) => i.id)).toEqual([1, 4]);
    expect((await reader.linkedDistinctIds(1, ['user'])).sort()).toEqual(['anon', 'x', 'y']);
    expect(await reader.linkedDistinctIds(1, ['user', 'anon', 'x', 'y'])).toEqual([]);
    expect(await reader.identityIndexComplete()).toBe(true);
    // a read model built before the index existed: persons 1… have no identity
    await spec.pool.query('DELETE FROM person_identities WHERE id < 3');
    expect(await reader.identityIndexComplete()).toBe(false);
  });
});
