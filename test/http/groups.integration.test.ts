import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { adminUserId, expectError, newUser } from './helpers.ts';

/**
 * `GET groups/?group_type_index=` and `groups/find/` (issue #10): groups captured through /batch/
 * with `$groupidentify`, read back as PostHog answers them.
 */
let t: TestService;
let projectId: number;
const base = () => `/api/projects/${projectId}/groups/`;

const identify = (type: string, key: string, props: Record<string, unknown>) => ({
  event: '$groupidentify',
  properties: {
    distinct_id: `$${type}_${key}`,
    $group_type: type,
    $group_key: key,
    $group_set: props,
  },
});

beforeAll(async () => {
  t = await startTestService();
  const token = `phc_groups_${process.pid}_${Date.now().toString(36)}`;
  ({ projectId } = await createProject(accessDeps(t.service.ctx), {
    name: 'groups',
    ownerUserId: await adminUserId(t),
    projectApiKey: token,
  }));
  // One request per group so their creation times differ and the order is known.
  const batches = [
    [identify('company', 'acme', { name: 'Acme Corp', size: 50 })],
    [identify('company', 'globex', { name: 'Globex', size: 5 })],
    [identify('team', 'red', { name: 'Red team' })],
    [identify('company', 'initech_100%', { size: 9 })],
    // A later $groupidentify updates the properties of an existing group.
    [identify('company', 'acme', { size: 51, plan: 'enterprise' })],
  ];
  for (const batch of batches) {
    await capture(t, batch, { apiKey: token });
    await new Promise((r) => setTimeout(r, 15));
  }
});
afterAll(async () => t?.close());

describe('GET groups/', () => {
  it('lists the groups of one type, newest first, with their merged properties', async () => {
    const res = await t.api('GET', `${base()}?group_type_index=0`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.count).toBe(3);
    expect(res.body.next).toBeNull();
    expect(res.body.results.map((g: { group_key: string }) => g.group_key)).toEqual([
      'initech_100%',
      'globex',
      'acme',
    ]);
    expect(res.body.results[2]).toEqual({
      group_type_index: 0,
      group_key: 'acme',
      group_properties: { name: 'Acme Corp', size: 51, plan: 'enterprise' },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const teams = await t.api('GET', `${base()}?group_type_index=1`);
    expect(teams.body.results.map((g: { group_key: string }) => g.group_key)).toEqual(['red']);
    const none = await t.api('GET', `${base()}?group_type_index=3`);
    expect(none.body).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it('searches the key and the name property, case-insensitively, wildcards taken literally', async () => {
    const keys = async (search: string) =>
      (
        await t.api('GET', `${base()}?group_type_index=0&search=${encodeURIComponent(search)}`)
      ).body.results.map((g: { group_key: string }) => g.group_key);
    expect(await keys('ACME')).toEqual(['acme']);
    expect(await keys('corp')).toEqual(['acme']);
    expect(await keys('glo')).toEqual(['globex']);
    expect(await keys('100%')).toEqual(['initech_100%']);
    expect(await keys('%')).toEqual(['initech_100%']);
    expect(await keys('_')).toEqual(['initech_100%']);
    expect(await keys('nothing')).toEqual([]);
  });

  it('pages with limit and offset and a next link', async () => {
    const first = await t.api('GET', `${base()}?group_type_index=0&limit=2`);
    expect(first.body.results).toHaveLength(2);
    expect(first.body.count).toBe(3);
    const next = new URL(first.body.next);
    expect(next.searchParams.get('offset')).toBe('2');
    expect(next.searchParams.get('group_type_index')).toBe('0');
    const second = await t.api('GET', `${next.pathname}${next.search}`);
    expect(second.body.results.map((g: { group_key: string }) => g.group_key)).toEqual(['acme']);
  });

  it('refuses a missing or out-of-range group type, and needs group:read', async () => {
    expectError(await t.api('GET', base()), 400, { attr: 'group_type_index' });
    expectError(await t.api('GET', `${base()}?group_type_index=5`), 400, {
      attr: 'group_type_index',
    });
    expectError(await t.api('GET', `${base()}?group_type_index=x`), 400);
    const { key } = await newUser(t, { projectId, scopes: ['person:read'] });
    expectError(await t.api('GET', `${base()}?group_type_index=0`, undefined, key), 403);
  });
});

describe('GET groups/find/', () => {
  it('answers one group by type and key, 404 for a key of another type or none', async () => {
    const res = await t.api('GET', `${base()}find/?group_type_index=1&group_key=red`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      group_type_index: 1,
      group_key: 'red',
      group_properties: { name: 'Red team' },
      created_at: expect.any(String),
    });
    expectError(await t.api('GET', `${base()}find/?group_type_index=0&group_key=red`), 404, {
      code: 'not_found',
    });
    expectError(await t.api('GET', `${base()}find/?group_type_index=0`), 400, {
      attr: 'group_key',
    });
  });
});
