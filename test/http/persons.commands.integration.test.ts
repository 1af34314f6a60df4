import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  capture,
  getPerson,
  identifiedPerson,
  personByDistinctId,
  personsPath,
} from '../support/personHttp.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectError, expectValidation, linkPath, newUser } from './helpers.ts';

/**
 * Person commands over HTTP against persons built by real capture: each write answers 200 with the
 * person as the read side shows it, and GET shows the same right after (read-your-writes).
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

const post = (rest: string, body?: unknown) => t.api('POST', personsPath(t, rest), body);

describe('PATCH persons/:id/', () => {
  it('sets the given properties, keeps the others, and GET shows it at once', async () => {
    const { person, email } = await identifiedPerson(t, 'patch');
    const res = await t.api('PATCH', personsPath(t, `${person.id}/`), {
      properties: { plan: 'paid', seats: 3, nested: { a: [1] } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      id: person.id,
      uuid: person.uuid,
      name: email,
      distinct_ids: person.distinct_ids,
      created_at: person.created_at,
    });
    expect(res.body.properties).toMatchObject({
      email,
      plan: 'paid',
      seats: 3,
      nested: { a: [1] },
    });
    const read = await getPerson(t, person.id);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  it('accepts the uuid as :id', async () => {
    const { person } = await identifiedPerson(t, 'patch-uuid');
    const res = await t.api('PATCH', personsPath(t, `${person.uuid}/`), {
      properties: { plan: 'team' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.id).toBe(person.id);
    expect((await getPerson(t, person.uuid)).body.properties.plan).toBe('team');
  });

  it('properties is required (400 attr properties); unknown person 404; bad id 400', async () => {
    const { person } = await identifiedPerson(t, 'patch-bad');
    expectValidation(
      await t.api('PATCH', personsPath(t, `${person.id}/`), {}),
      'properties',
      'required',
    );
    expectValidation(
      await t.api('PATCH', personsPath(t, `${person.id}/`), { properties: 'x' }),
      'properties',
    );
    expectError(await t.api('PATCH', personsPath(t, '999999/'), { properties: { a: 1 } }), 404);
    expectError(
      await t.api('PATCH', personsPath(t, '00000000-0000-4000-8000-000000000000/'), {
        properties: { a: 1 },
      }),
      404,
    );
    expectError(await t.api('PATCH', personsPath(t, 'not-an-id/'), { properties: { a: 1 } }), 400);
    expect((await getPerson(t, person.id)).body.properties.plan).toBe('free');
  });

  it('a later $set from capture still wins over the PATCH (both are folded in log order)', async () => {
    const { person, user } = await identifiedPerson(t, 'patch-order');
    expect(
      (await t.api('PATCH', personsPath(t, `${person.id}/`), { properties: { plan: 'paid' } }))
        .status,
    ).toBe(200);
    await capture(t, {
      event: 'upgrade',
      distinct_id: user,
      properties: { $set: { plan: 'enterprise' } },
    });
    expect((await personByDistinctId(t, user)).properties.plan).toBe('enterprise');
  });
});

describe('update_property and delete_property', () => {
  it('update_property takes key and value from the query or the body', async () => {
    const { person } = await identifiedPerson(t, 'upd');
    const q = await post(`${person.id}/update_property/?key=color&value=blue`);
    expect(q.status, q.text).toBe(200);
    expect(q.body.properties.color).toBe('blue');
    const b = await post(`${person.id}/update_property/`, { key: 'limits', value: { max: 5 } });
    expect(b.status, b.text).toBe(200);
    expect(b.body.properties).toMatchObject({ color: 'blue', limits: { max: 5 } });
    expect((await getPerson(t, person.id)).body.properties).toMatchObject({
      color: 'blue',
      limits: { max: 5 },
    });
    expectValidation(await post(`${person.id}/update_property/`, { value: 1 }), 'key', 'required');
    expectValidation(await post(`${person.id}/update_property/?key=x`), 'value', 'required');
  });

  it('delete_property removes the key named by $unset (query or body); an absent key changes nothing', async () => {
    const { person, email } = await identifiedPerson(t, 'del');
    await post(`${person.id}/update_property/`, { key: 'color', value: 'red' });
    const q = await post(`${person.id}/delete_property/?$unset=plan`);
    expect(q.status, q.text).toBe(200);
    expect(q.body.properties).not.toHaveProperty('plan');
    const b = await post(`${person.id}/delete_property/`, { $unset: 'color' });
    expect(b.status, b.text).toBe(200);
    expect(b.body.properties).not.toHaveProperty('color');
    const read = await getPerson(t, person.id);
    expect(read.body.properties).not.toHaveProperty('plan');
    expect(read.body.properties).not.toHaveProperty('color');
    expect(read.body.properties.email).toBe(email);
    const none = await post(`${person.id}/delete_property/`, { $unset: 'never-set' });
    expect(none.status).toBe(200);
    expect(none.body).toEqual(read.body);
    expectValidation(await post(`${person.id}/delete_property/`, {}), '$unset', 'required');
  });
});

describe('POST persons/:id/split/', () => {
  it('without main_distinct_id: the oldest id stays, properties are wiped, every other id gets a new empty person', async () => {
    const { person, anon, user, device } = await identifiedPerson(t, 'split');
    const res = await post(`${person.id}/split/`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      id: person.id,
      uuid: person.uuid,
      distinct_ids: [anon],
      properties: {},
    });
    expect(await getPerson(t, person.id)).toMatchObject({
      status: 200,
      body: { distinct_ids: [anon], properties: {} },
    });
    const others = [await personByDistinctId(t, user), await personByDistinctId(t, device)];
    for (const [other, id] of [
      [others[0], user],
      [others[1], device],
    ] as const) {
      expect(other).toMatchObject({ distinct_ids: [id], properties: {} });
      expect(other.id).not.toBe(person.id);
      expect(other.uuid).not.toBe(person.uuid);
    }
    expect(others[0].id).not.toBe(others[1].id);
  });

  it('with main_distinct_id: that id and the properties stay with the person', async () => {
    const { person, anon, user, device, email } = await identifiedPerson(t, 'split-main');
    expectValidation(
      await post(`${person.id}/split/`, { main_distinct_id: 'stranger' }),
      'main_distinct_id',
    );
    const res = await post(`${person.id}/split/`, { main_distinct_id: user });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      id: person.id,
      distinct_ids: [user],
      properties: { email, plan: 'free' },
    });
    for (const id of [anon, device])
      expect(await personByDistinctId(t, id)).toMatchObject({ distinct_ids: [id], properties: {} });
    // the split-off persons are ordinary persons: capture keeps updating them
    await capture(t, { event: 'x', distinct_id: device, properties: { $set: { came: 'back' } } });
    expect((await personByDistinctId(t, device)).properties).toEqual({ came: 'back' });
  });
});

describe('scopes', () => {
  it('writes need person:write, activity needs activity_log:read', async () => {
    const { person } = await identifiedPerson(t, 'scope');
    const reader = await newUser(t, { scopes: ['person:read'] });
    expectError(
      await t.api('PATCH', personsPath(t, `${person.id}/`), { properties: { a: 1 } }, reader.key),
      403,
    );
    expectError(await t.api('POST', personsPath(t, `${person.id}/split/`), {}, reader.key), 403);
    expectError(await t.api('DELETE', personsPath(t, `${person.id}/`), undefined, reader.key), 403);
    expectError(
      await t.api('GET', personsPath(t, `${person.id}/activity/`), undefined, reader.key),
      403,
    );
    const writer = await newUser(t, { scopes: ['person:write', 'activity_log:read'] });
    expect(
      (await t.api('PATCH', personsPath(t, `${person.id}/`), { properties: { a: 1 } }, writer.key))
        .status,
    ).toBe(200);
    expect(
      (await t.api('GET', personsPath(t, `${person.id}/activity/`), undefined, writer.key)).status,
    ).toBe(200);
    expect((await getPerson(t, person.id)).body.properties.a).toBe(1);
  });
});

describe('activity', () => {
  it('persons/:id/activity/ lists the commands newest first, with who and what changed', async () => {
    const { person, user, device, anon } = await identifiedPerson(t, 'act');
    await t.api('PATCH', personsPath(t, `${person.id}/`), {
      properties: { plan: 'paid', seats: 2 },
    });
    await post(`${person.id}/delete_property/`, { $unset: 'seats' });
    await post(`${person.id}/split/`, { main_distinct_id: user });
    const res = await t.api('GET', personsPath(t, `${person.id}/activity/`));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ count: 3, total_count: 3, next: null, previous: null });
    expect(res.body.results.map((e: any) => e.activity)).toEqual([
      'split_person',
      'delete_property',
      'updated',
    ]);
    const [split, del, upd] = res.body.results;
    expect(upd).toMatchObject({
      scope: 'Person',
      item_id: String(person.id),
      user: { email: expect.stringContaining('@') },
      detail: {
        id: String(person.id),
        name: person.uuid,
        changes: [
          {
            type: 'Person',
            action: 'changed',
            field: 'properties',
            before: { plan: 'free', seats: null },
            after: { plan: 'paid', seats: 2 },
          },
        ],
      },
    });
    expect(del.detail.changes).toEqual([
      { type: 'Person', action: 'changed', field: 'properties', before: { seats: 2 }, after: {} },
    ]);
    expect(split.detail.changes[0]).toMatchObject({
      action: 'split',
      after: { distinct_ids: [user, anon, device], main_distinct_id: user },
    });
    expect(Date.parse(split.created_at)).toBeGreaterThanOrEqual(Date.parse(upd.created_at));

    const page = await t.api('GET', personsPath(t, `${person.id}/activity/?limit=2`));
    expect(page.body.results.map((e: any) => e.id)).toEqual([split.id, del.id]);
    const rest = await t.api('GET', linkPath(t, page.body.next));
    expect(rest.body.results.map((e: any) => e.id)).toEqual([upd.id]);
  });

  it('persons/activity/ covers every person of the project, deleted ones included; 404 for a person never seen', async () => {
    const a = await identifiedPerson(t, 'act-all-a');
    const b = await identifiedPerson(t, 'act-all-b');
    await post(`${a.person.id}/update_property/`, { key: 'k', value: 1 });
    expect((await t.api('DELETE', personsPath(t, `${b.person.id}/`))).status).toBe(204);
    const all = await t.api('GET', personsPath(t, 'activity/?limit=1000'));
    expect(all.status, all.text).toBe(200);
    const mine = all.body.results.filter((e: any) =>
      [String(a.person.id), String(b.person.id)].includes(e.item_id),
    );
    expect(mine.map((e: any) => [e.item_id, e.activity])).toEqual([
      [String(b.person.id), 'deleted'],
      [String(a.person.id), 'updated'],
    ]);
    expect(mine[0].detail.changes[0]).toMatchObject({
      action: 'deleted',
      after: { delete_events: false },
    });
    expect([...mine[0].detail.changes[0].before.distinct_ids].sort()).toEqual(
      [b.anon, b.user, b.device].sort(),
    );
    const gone = await t.api('GET', personsPath(t, `${b.person.id}/activity/`));
    expect(gone.status).toBe(200);
    expect(gone.body.results.map((e: any) => e.activity)).toEqual(['deleted']);
    expectError(await t.api('GET', personsPath(t, '987654/activity/')), 404);
  });
});
