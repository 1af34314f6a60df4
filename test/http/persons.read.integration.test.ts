import { PostHog as PostHogV4 } from 'posthog-node-v4';
import { PostHog as PostHogV5 } from 'posthog-node-v5';
import { v5 as uuidv5 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { personEventTypes } from '../../commands/persons/model/personEvents.ts';
import { personsReader } from '../../projections/persons/personsReader.ts';
import { capture as captureBatch } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { adminUserId, expectError, expectValidation, newProject, newUser } from './helpers.ts';

/**
 * The persons read model seen through REST, fed only by real capture: posthog-js-shaped events over
 * /batch/ and the real posthog-node clients. Identity rules are capture.md §3.2–3.6.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

let seq = 0;
const id = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`;
const personUuid = (distinctId: string) =>
  uuidv5(`${t.projectId}:${distinctId}`, '932979b4-65c3-4424-8467-0b66ec27bc22');
type Ev = {
  event: string;
  distinct_id: string;
  properties?: Record<string, unknown>;
  timestamp?: string;
};

/** Waits until the persons projection has applied everything captured so far. */
async function settle(): Promise<void> {
  const [newest] = await t.service.ctx.store.readAll({
    direction: 'backwards',
    before: 'end',
    maxCount: 1,
    filter: { eventTypes: ['EventCaptured', ...personEventTypes] },
  });
  if (newest)
    expect(await t.service.runners.get('persons')!.waitFor(newest.position, 20_000)).toBe(true);
}

/** One /batch/ request per call, so calls are ordered in the log (a request groups its events per distinct id). */
async function capture(...events: Ev[]): Promise<void> {
  const batch = events.map((e) => ({
    event: e.event,
    timestamp: e.timestamp,
    properties: { distinct_id: e.distinct_id, $lib: 'web', ...e.properties },
  }));
  await captureBatch(t, batch);
}

const persons = (query: string) => t.api('GET', `/api/projects/${t.projectId}/persons/?${query}`);
async function personOf(distinctId: string): Promise<any> {
  await settle();
  const res = await persons(`distinct_id=${encodeURIComponent(distinctId)}`);
  expect(res.status, res.text).toBe(200);
  expect(res.body.count).toBeLessThanOrEqual(1);
  return res.body.results[0] ?? null;
}

describe('identity from capture', () => {
  it('anonymous pageviews then $identify (posthog-js shape): one identified person with both ids, $initial_* kept', async () => {
    const anon = `0190${Date.now().toString(16).padStart(12, '0').slice(-4)}-aaaa-7bbb-8ccc-${String(++seq).padStart(12, '0')}`;
    const user = id('user');
    await capture({
      event: '$pageview',
      distinct_id: anon,
      timestamp: '2024-03-01T10:00:00.000Z',
      properties: {
        $browser: 'Chrome',
        $current_url: 'https://a.example/start',
        utm_source: 'news',
      },
    });
    await capture({
      event: '$pageview',
      distinct_id: anon,
      timestamp: '2024-03-01T10:05:00.000Z',
      properties: { $browser: 'Firefox', $current_url: 'https://a.example/next' },
    });
    const before = await personOf(anon);
    expect(before).toMatchObject({
      is_identified: false,
      distinct_ids: [anon],
      name: anon,
      uuid: personUuid(anon),
      created_at: '2024-03-01T10:00:00.000Z',
    });

    await capture({
      event: '$identify',
      distinct_id: user,
      properties: {
        $anon_distinct_id: anon,
        $set: { email: `${user}@example.com`, plan: 'pro' },
        $set_once: { signup: 'web' },
      },
    });
    const merged = await personOf(user);
    expect(merged.id).toBe(before.id);
    expect(merged).toMatchObject({
      is_identified: true,
      uuid: personUuid(anon),
      name: `${user}@example.com`,
      created_at: '2024-03-01T10:00:00.000Z',
    });
    // the non-anonymous (non-UUID-looking) id is listed first
    expect(merged.distinct_ids).toEqual([user, anon]);
    expect(merged.properties).toMatchObject({
      email: `${user}@example.com`,
      plan: 'pro',
      signup: 'web',
      // the second pageview changed only keys PostHog does not write a person for
      $browser: 'Chrome',
      $initial_browser: 'Chrome',
      $current_url: 'https://a.example/start',
      $initial_current_url: 'https://a.example/start',
      utm_source: 'news',
      $initial_utm_source: 'news',
    });
    expect(typeof merged.properties.$creator_event_uuid).toBe('string');
    expect((await personOf(anon)).id).toBe(merged.id);
    const all = await persons(`search=${encodeURIComponent(user)}`);
    expect(all.body.count).toBe(1);

    // the events REST `person` field: first attached id only, email/name/username only
    const summaries = await personsReader(t.service.stores.pool).summariesForDistinctIds(
      t.projectId,
      [anon, user, 'nobody', anon],
    );
    const summary = {
      is_identified: true,
      distinct_ids: [anon],
      properties: { email: `${user}@example.com` },
    };
    expect(Object.fromEntries(summaries)).toEqual({ [anon]: summary, [user]: summary });
    expect(
      (
        await personsReader(t.service.stores.pool).summariesForDistinctIds(t.projectId + 1000, [
          anon,
        ])
      ).size,
    ).toBe(0);
  });

  it('posthog-node identify, alias and groupIdentify', async () => {
    const client = new PostHogV5(t.projectApiKey, {
      host: t.url,
      flushAt: 1,
      fetchRetryCount: 0,
      disableGeoip: true,
    });
    const user = id('node-user');
    const anon = id('node-anon');
    const alias = id('node-alias');
    const company = id('acme');
    await client.captureImmediate({ distinctId: anon, event: 'opened app' });
    await client.identifyImmediate({
      distinctId: user,
      properties: {
        $set: { email: `${user}@example.com` },
        $set_once: { first: 'node' },
        $anon_distinct_id: anon,
      },
    });
    await client.aliasImmediate({ distinctId: user, alias });
    await client.groupIdentifyImmediate({
      groupType: 'company',
      groupKey: company,
      properties: { name: 'Acme' },
    });
    await client.shutdown();

    const person = await personOf(alias);
    expect(person).toMatchObject({
      is_identified: true,
      uuid: personUuid(anon),
      properties: expect.objectContaining({ email: `${user}@example.com`, first: 'node' }),
    });
    expect([...person.distinct_ids].sort()).toEqual([alias, anon, user].sort());
    const types = await t.api('GET', `/api/projects/${t.projectId}/groups_types/`);
    expect(types.status, types.text).toBe(200);
    expect(types.body).toContainEqual({
      group_type: 'company',
      group_type_index: expect.any(Number),
      name_singular: null,
      name_plural: null,
    });

    const v4 = new PostHogV4(t.projectApiKey, {
      host: t.url,
      flushAt: 1,
      fetchRetryCount: 0,
      disableGeoip: true,
    });
    const v4user = id('v4-user');
    await v4.identifyImmediate({
      distinctId: v4user,
      properties: { email: `${v4user}@example.com` },
    });
    await v4.shutdown();
    // an $identify without $anon_distinct_id is a property update: the person is not identified
    expect(await personOf(v4user)).toMatchObject({
      is_identified: false,
      distinct_ids: [v4user],
      name: `${v4user}@example.com`,
    });
  });

  it('refuses to merge two identified persons unless $merge_dangerously', async () => {
    const [a, aAnon, b, bAnon] = [id('a'), id('a-anon'), id('b'), id('b-anon')];
    await capture(
      { event: '$pageview', distinct_id: aAnon },
      { event: '$pageview', distinct_id: bAnon },
    );
    await capture({
      event: '$identify',
      distinct_id: a,
      properties: { $anon_distinct_id: aAnon, $set: { who: 'a' } },
    });
    await capture({
      event: '$identify',
      distinct_id: b,
      properties: { $anon_distinct_id: bAnon, $set: { who: 'b' } },
    });
    await capture({
      event: '$create_alias',
      distinct_id: a,
      properties: { alias: b, $set: { aliased: true } },
    });
    const pa = await personOf(a);
    const pb = await personOf(b);
    expect(pa.id).not.toBe(pb.id);
    expect([...pa.distinct_ids].sort()).toEqual([a, aAnon].sort());
    expect([...pb.distinct_ids].sort()).toEqual([b, bAnon].sort());
    expect(pa.properties).toMatchObject({ who: 'a', aliased: true });
    expect(pb.properties.aliased).toBeUndefined();

    await capture({ event: '$merge_dangerously', distinct_id: a, properties: { alias: b } });
    const merged = await personOf(b);
    expect(merged.id).toBe(pa.id);
    expect([...merged.distinct_ids].sort()).toEqual([a, aAnon, b, bAnon].sort());
    expect(merged.properties.who).toBe('a'); // the event's person wins conflicts
    const gone = await t.api('GET', `/api/projects/${t.projectId}/persons/${pb.id}/`);
    expectError(gone, 404);
  });

  it('$create_alias merges the alias even when the event also carries $anon_distinct_id', async () => {
    const [u, x, stray] = [id('al-user'), id('al-x'), id('al-stray')];
    await capture({ event: '$pageview', distinct_id: x }, { event: '$pageview', distinct_id: u });
    const px = await personOf(x);
    await capture({
      event: '$create_alias',
      distinct_id: u,
      properties: { alias: x, $anon_distinct_id: stray },
    });
    const merged = await personOf(x);
    expect([...merged.distinct_ids].sort()).toEqual([u, x].sort());
    expectError(await t.api('GET', `/api/projects/${t.projectId}/persons/${px.id}/`), 404); // merged away, not left without ids
    expect(await personOf(stray)).toBeNull();
  });

  it.each(['anonymous', 'null', '0'])('never merges with the illegal id %j', async (illegal) => {
    const user = id('legal');
    await capture({ event: '$pageview', distinct_id: illegal });
    await capture({
      event: '$identify',
      distinct_id: user,
      properties: { $anon_distinct_id: illegal, $set: { e: 1 } },
    });
    const person = await personOf(user);
    expect(person).toMatchObject({
      distinct_ids: [user],
      is_identified: false,
      properties: expect.objectContaining({ e: 1 }),
    });
    const other = await personOf(illegal);
    expect(other.id).not.toBe(person.id);
    expect(other.distinct_ids).toEqual([illegal]);
  });

  it('$set_once, $set and $unset: first set_once wins, last set wins, unset after set', async () => {
    const user = id('props');
    await capture({
      event: 'e1',
      distinct_id: user,
      properties: { $set_once: { a: 1, b: 1, both: 'once' }, $set: { c: 1, both: 'set' } },
    });
    await capture({
      event: 'e2',
      distinct_id: user,
      properties: { $set_once: { a: 2, n: null }, $set: { b: 2 } },
    });
    await capture({
      event: 'e3',
      distinct_id: user,
      properties: { $set: { d: 1 }, $unset: ['d', 'c'], $set_once: { n: 'later' } },
    });
    await capture({ event: 'e4', distinct_id: user, properties: { $unset: { b: null } } });
    const person = await personOf(user);
    const { $creator_event_uuid: _c, ...props } = person.properties;
    expect(props).toEqual({ a: 1, both: 'set', n: null });
  });

  it('personless events create no person; a later event creates it with the deterministic uuid', async () => {
    const user = id('personless');
    await capture({
      event: '$pageview',
      distinct_id: user,
      properties: { $process_person_profile: false, $set: { x: 1 } },
    });
    expect(await personOf(user)).toBeNull();
    expectError(
      await t.api('GET', `/api/projects/${t.projectId}/persons/${personUuid(user)}/`),
      404,
    );
    await capture({
      event: '$identify',
      distinct_id: id('x'),
      properties: { $process_person_profile: false, $anon_distinct_id: user },
    });
    expect(await personOf(user)).toBeNull();
    await capture({ event: '$pageview', distinct_id: user, properties: { $set: { y: 2 } } });
    expect(await personOf(user)).toMatchObject({
      uuid: personUuid(user),
      properties: expect.not.objectContaining({ x: 1 }),
    });
  });

  it('group types get indexes 0-4 in order of first sight; a sixth type gets none', async () => {
    const { projectId: p, projectApiKey: key } = await createProject(accessDeps(t.service.ctx), {
      name: id('groups'),
      ownerUserId: await adminUserId(t),
    });
    expect(
      await t.service.runners
        .get('access')!
        .waitFor(await t.service.ctx.store.headPosition(), 10_000),
    ).toBe(true);
    const types = ['t0', 't1', 't2', 't3', 't4', 't5'];
    for (const type of types) {
      await captureBatch(
        t,
        [{ event: 'grouped', properties: { distinct_id: id('g'), $groups: { [type]: 'k' } } }],
        { apiKey: key },
      );
    }
    await settle();
    const res = await t.api('GET', `/api/projects/${p}/groups_types/`);
    expect(res.body.map((x: any) => [x.group_type, x.group_type_index])).toEqual(
      types.slice(0, 5).map((ty, i) => [ty, i]),
    );
  });
});

describe('retrieve', () => {
  it('by integer id or uuid; 400 for anything else; 404 for unknown or another project', async () => {
    const user = id('get');
    await capture({
      event: '$set',
      distinct_id: user,
      properties: { $set: { email: `${user}@example.com` } },
    });
    const listed = await personOf(user);
    const byId = await t.api('GET', `/api/projects/${t.projectId}/persons/${listed.id}/`);
    expect(byId.status, byId.text).toBe(200);
    expect(byId.body).toEqual(listed);
    expect(Object.keys(byId.body).sort()).toEqual([
      'created_at',
      'distinct_ids',
      'id',
      'is_identified',
      'name',
      'properties',
      'uuid',
    ]);
    const byUuid = await t.api(
      'GET',
      `/api/projects/${t.projectId}/persons/${listed.uuid.toUpperCase()}/`,
    );
    expect(byUuid.body).toEqual(listed);

    const bad = await t.api('GET', `/api/projects/${t.projectId}/persons/${user}/`);
    expectValidation(bad, null, 'invalid');
    expect(bad.body.detail).toBe(
      `The ID provided does not look like a personID. If you are using a distinctId, please use /persons?distinct_id=${user} instead.`,
    );
    expectError(await t.api('GET', `/api/projects/${t.projectId}/persons/999999999/`), 404);
    expectError(await t.api('GET', `/api/projects/${t.projectId}/persons/99999999999999/`), 404);
    expectError(
      await t.api('GET', `/api/projects/${t.projectId}/persons/${personUuid('nobody')}/`),
      404,
    );
    const other = await newProject(t);
    expectError(await t.api('GET', `/api/projects/${other}/persons/${listed.id}/`), 404);
    expectError(await t.api('GET', `/api/projects/${other}/persons/${listed.uuid}/`), 404);
    expect(
      (await t.api('GET', `/api/projects/${other}/persons/?distinct_id=${user}`)).body,
    ).toMatchObject({ count: 0, results: [] });
  });

  it('is described in the OpenAPI document', async () => {
    const doc = await t.api('GET', '/api/schema', undefined, null);
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        '/api/projects/{project_id}/persons/',
        '/api/projects/{project_id}/persons/{id}/',
        '/api/projects/{project_id}/persons/values/',
        '/api/projects/{project_id}/groups_types/',
      ]),
    );
  });

  it('needs person:read', async () => {
    const { key } = await newUser(t, { scopes: ['feature_flag:read'] });
    expectError(await t.api('GET', `/api/projects/${t.projectId}/persons/`, undefined, key), 403);
    const reader = await newUser(t, { scopes: ['person:read'] });
    expect(
      (await t.api('GET', `/api/projects/${t.projectId}/persons/`, undefined, reader.key)).status,
    ).toBe(200);
    expectError(await t.api('GET', `/api/projects/${t.projectId}/persons/`, undefined, null), 401);
  });
});
