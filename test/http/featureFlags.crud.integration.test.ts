import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_EMAIL } from '../../src/bootstrap.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import {
  adminUserId,
  createFlag,
  expectError,
  flagPath,
  flagsPath,
  followPages,
  linkPath,
  newProject,
  newUser,
} from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

describe('create and get', () => {
  it('creates a flag (201) with the documented shape and defaults, and GET returns the same flag', async () => {
    const before = Date.now();
    const res = await t.api('POST', flagsPath(t.projectId), {
      key: 'new-checkout',
      name: 'New checkout flow',
    });
    expect(res.status, res.text).toBe(201);
    const flag = res.body;
    expect(flag).toMatchObject({
      name: 'New checkout flow',
      key: 'new-checkout',
      deleted: false,
      active: true,
      ensure_experience_continuity: false,
      experiment_set: [],
      surveys: {},
      features: {},
      rollback_conditions: null,
      performed_rollback: false,
      can_edit: true,
      tags: [],
      usage_dashboard: null,
      analytics_dashboards: [],
      has_enriched_analytics: false,
      is_simple_flag: true,
      rollout_percentage: null,
    });
    expect(Number.isInteger(flag.id)).toBe(true);
    expect(flag.filters.groups).toEqual([
      expect.objectContaining({ properties: [], rollout_percentage: null }),
    ]);
    expect(flag.created_at).toMatch(ISO);
    expect(Date.parse(flag.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(flag.created_at)).toBeLessThanOrEqual(Date.now() + 1000);

    const got = await t.api('GET', flagPath(t.projectId, flag.id));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(flag);
  });

  it('sets created_by to the calling user', async () => {
    const admin = await t.api('POST', flagsPath(t.projectId), { key: 'by-admin' });
    expect(admin.status).toBe(201);
    expect(admin.body.created_by).toMatchObject({
      id: await adminUserId(t),
      email: BOOTSTRAP_EMAIL,
      is_email_verified: true,
    });
    expect(admin.body.created_by.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof admin.body.created_by.distinct_id).toBe('string');

    const other = await newUser(t, { firstName: 'Olga' });
    const res = await t.api('POST', flagsPath(t.projectId), { key: 'by-olga' }, other.key);
    expect(res.status, res.text).toBe(201);
    expect(res.body.created_by).toMatchObject({
      id: other.userId,
      email: other.email,
      first_name: 'Olga',
      last_name: 'User',
    });
    const got = await t.api('GET', flagPath(t.projectId, res.body.id));
    expect(got.body.created_by.id).toBe(other.userId);
  });

  it('keeps every writable field sent on create', async () => {
    const body = {
      key: 'all-fields',
      name: 'Everything',
      filters: { groups: [{ properties: [], rollout_percentage: 25 }] },
      active: false,
      created_at: '2024-03-01T12:00:00Z',
      ensure_experience_continuity: true,
      rollback_conditions: [{ threshold: 5 }],
      performed_rollback: true,
      tags: ['beta', 'checkout'],
      analytics_dashboards: [3, 4],
      has_enriched_analytics: true,
    };
    const res = await t.api('POST', flagsPath(t.projectId), body);
    expect(res.status, res.text).toBe(201);
    const expected = {
      key: 'all-fields',
      name: 'Everything',
      active: false,
      ensure_experience_continuity: true,
      rollback_conditions: [{ threshold: 5 }],
      performed_rollback: true,
      tags: ['beta', 'checkout'],
      analytics_dashboards: [3, 4],
      has_enriched_analytics: true,
      is_simple_flag: true,
      rollout_percentage: 25,
    };
    expect(res.body).toMatchObject(expected);
    expect(Date.parse(res.body.created_at)).toBe(Date.parse('2024-03-01T12:00:00Z'));
    expect(res.body.filters.groups[0]).toMatchObject({ properties: [], rollout_percentage: 25 });
    const got = await t.api('GET', flagPath(t.projectId, res.body.id));
    expect(got.body).toMatchObject(expected);
    expect(got.body).toEqual(res.body);
  });

  it('answers 404 in the error shape for a flag that does not exist or lives in another project', async () => {
    expectError(await t.api('GET', flagPath(t.projectId, 999_999)), 404, { code: 'not_found' });
    const elsewhere = await newProject(t);
    const flag = await createFlag(t, { key: 'only-elsewhere' }, { projectId: elsewhere });
    expectError(await t.api('GET', flagPath(t.projectId, flag.id)), 404, { code: 'not_found' });
    expectError(await t.api('PATCH', flagPath(t.projectId, flag.id), { name: 'hijack' }), 404);
    const still = await t.api('GET', flagPath(elsewhere, flag.id));
    expect(still.status).toBe(200);
    expect(still.body.name).toBe('');
  });

  it('allows the same key in two different projects', async () => {
    const a = await newProject(t);
    const b = await newProject(t);
    await createFlag(t, { key: 'shared-key' }, { projectId: a });
    const res = await t.api('POST', flagsPath(b), { key: 'shared-key' });
    expect(res.status, res.text).toBe(201);
  });

  it('trims surrounding whitespace from the key and checks uniqueness on the trimmed key', async () => {
    const project = await newProject(t);
    const res = await t.api('POST', flagsPath(project), { key: '  padded-key  ' });
    expect(res.status, res.text).toBe(201);
    expect(res.body.key).toBe('padded-key');
    expect((await t.api('GET', flagPath(project, res.body.id))).body.key).toBe('padded-key');
    const dup = await t.api('POST', flagsPath(project), { key: ' padded-key' });
    expectError(dup, 400, { type: 'validation_error', code: 'unique', attr: 'key' });
    const list = await t.api('GET', flagsPath(project));
    expect(list.body.count).toBe(1);
  });
});

describe('list and pagination', () => {
  it('lists the project flags newest first with count/next/previous, and the links walk every page', async () => {
    const project = await newProject(t);
    const created: any[] = [];
    for (let i = 0; i < 5; i++)
      created.push(await createFlag(t, { key: `page-${i}` }, { projectId: project }));
    const newestFirst = created.map((f) => f.id).reverse();

    const first = await t.api('GET', `${flagsPath(project)}?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.count).toBe(5);
    expect(first.body.previous).toBeNull();
    expect(first.body.results.map((f: any) => f.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.body.next).toEqual(expect.any(String));
    const nextUrl = new URL(first.body.next);
    expect(nextUrl.searchParams.get('limit')).toBe('2');
    expect(nextUrl.searchParams.get('offset')).toBe('2');

    const pages = await followPages(t, `${flagsPath(project)}?limit=2`);
    expect(pages).toHaveLength(3);
    expect(pages.map((p) => p.results.length)).toEqual([2, 2, 1]);
    expect(pages.every((p) => p.count === 5)).toBe(true);
    expect(pages.flatMap((p) => p.results.map((f: any) => f.id))).toEqual(newestFirst);
    expect(pages[2].next).toBeNull();

    // previous from the last page leads back to the middle page, then to the first.
    const back = await t.api('GET', linkPath(t, pages[2].previous));
    expect(back.body.results.map((f: any) => f.id)).toEqual(newestFirst.slice(2, 4));
    const backAgain = await t.api('GET', linkPath(t, back.body.previous));
    expect(backAgain.body.results.map((f: any) => f.id)).toEqual(newestFirst.slice(0, 2));
    expect(backAgain.body.previous).toBeNull();
  });

  it('honours offset directly, including past the end', async () => {
    const project = await newProject(t);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await createFlag(t, { key: `off-${i}` }, { projectId: project })).id);
    const mid = await t.api('GET', `${flagsPath(project)}?limit=1&offset=1`);
    expect(mid.body.results.map((f: any) => f.id)).toEqual([ids[1]]);
    expect(mid.body.count).toBe(3);
    expect(new URL(mid.body.previous).searchParams.get('offset')).toBe('0');
    expect(new URL(mid.body.next).searchParams.get('offset')).toBe('2');
    const past = await t.api('GET', `${flagsPath(project)}?offset=10`);
    expect(past.status).toBe(200);
    expect(past.body).toMatchObject({ count: 3, next: null, results: [] });
  });

  it('rejects a malformed limit with a 400 naming it', async () => {
    const res = await t.api('GET', `${flagsPath(t.projectId)}?limit=abc`);
    expectError(res, 400, { type: 'validation_error', attr: 'limit' });
    expectError(await t.api('GET', `${flagsPath(t.projectId)}?offset=-1`), 400, {
      type: 'validation_error',
      attr: 'offset',
    });
  });

  it('only lists flags of the requested project', async () => {
    const a = await newProject(t);
    const b = await newProject(t);
    const fa = await createFlag(t, { key: 'in-a' }, { projectId: a });
    await createFlag(t, { key: 'in-b' }, { projectId: b });
    const list = await t.api('GET', flagsPath(a));
    expect(list.body.count).toBe(1);
    expect(list.body.results.map((f: any) => f.id)).toEqual([fa.id]);
  });
});

describe('update', () => {
  it('PATCH answers 200 with the new state, changes only the fields sent, and a GET right after sees it', async () => {
    const flag = await createFlag(t, {
      name: 'Before',
      tags: ['a'],
      filters: { groups: [{ properties: [], rollout_percentage: 10 }] },
    });
    const res = await t.api('PATCH', flagPath(t.projectId, flag.id), {
      name: 'After',
      active: false,
      filters: { groups: [{ properties: [], rollout_percentage: 60 }] },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      id: flag.id,
      key: flag.key,
      name: 'After',
      active: false,
      tags: ['a'],
      rollout_percentage: 60,
      is_simple_flag: true,
    });
    expect(res.body.created_by).toEqual(flag.created_by);
    expect(res.body.created_at).toBe(flag.created_at);
    const got = await t.api('GET', flagPath(t.projectId, flag.id));
    expect(got.body).toEqual(res.body);
    const listed = (await t.api('GET', `${flagsPath(t.projectId)}?limit=1000`)).body.results.find(
      (f: any) => f.id === flag.id,
    );
    expect(listed).toMatchObject({ name: 'After', active: false, rollout_percentage: 60 });
  });

  it('can rename the key, and the old key becomes free', async () => {
    const project = await newProject(t);
    const flag = await createFlag(t, { key: 'old-name' }, { projectId: project });
    const res = await t.api('PATCH', flagPath(project, flag.id), { key: 'new-name' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.key).toBe('new-name');
    const reuse = await t.api('POST', flagsPath(project), { key: 'old-name' });
    expect(reuse.status, reuse.text).toBe(201);
    // and the renamed flag's key is now taken
    expectError(await t.api('POST', flagsPath(project), { key: 'new-name' }), 400, {
      code: 'unique',
      attr: 'key',
    });
  });

  it('an empty PATCH changes nothing and answers the flag', async () => {
    const flag = await createFlag(t, { name: 'Stable' });
    const res = await t.api('PATCH', flagPath(t.projectId, flag.id), {});
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: flag.id, name: 'Stable', key: flag.key, deleted: false });
  });
});

describe('delete', () => {
  it('DELETE is refused with 405 and no body, and the flag is untouched', async () => {
    const flag = await createFlag(t);
    const res = await t.api('DELETE', flagPath(t.projectId, flag.id));
    expect(res.status).toBe(405);
    expect(res.text).toBe('');
    const got = await t.api('GET', flagPath(t.projectId, flag.id));
    expect(got.status).toBe(200);
    expect(got.body.deleted).toBe(false);
  });

  it('soft delete by PATCH deleted=true hides the flag from the list but GET still finds it', async () => {
    const project = await newProject(t);
    const keep = await createFlag(t, { key: 'keep-me' }, { projectId: project });
    const flag = await createFlag(t, { key: 'delete-me' }, { projectId: project });
    expect((await t.api('GET', flagsPath(project))).body.count).toBe(2);

    const res = await t.api('PATCH', flagPath(project, flag.id), { deleted: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: flag.id, deleted: true, key: 'delete-me' });

    const list = await t.api('GET', flagsPath(project));
    expect(list.body.count).toBe(1);
    expect(list.body.results.map((f: any) => f.id)).toEqual([keep.id]);
    const got = await t.api('GET', flagPath(project, flag.id));
    expect(got.status).toBe(200);
    expect(got.body.deleted).toBe(true);
  });

  it('restores a soft-deleted flag by PATCH deleted=false', async () => {
    const project = await newProject(t);
    const flag = await createFlag(t, { key: 'phoenix', name: 'Rises' }, { projectId: project });
    await t.api('PATCH', flagPath(project, flag.id), { deleted: true });
    const res = await t.api('PATCH', flagPath(project, flag.id), { deleted: false });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ deleted: false, key: 'phoenix', name: 'Rises' });
    const list = await t.api('GET', flagsPath(project));
    expect(list.body.results.map((f: any) => f.id)).toEqual([flag.id]);
    expect((await t.api('GET', flagPath(project, flag.id))).body.deleted).toBe(false);
  });

  it('a flag created with deleted=true is not listed but is gettable', async () => {
    const project = await newProject(t);
    const flag = await createFlag(
      t,
      { key: 'born-deleted', deleted: true },
      { projectId: project },
    );
    expect(flag.deleted).toBe(true);
    expect((await t.api('GET', flagsPath(project))).body.count).toBe(0);
    expect((await t.api('GET', flagPath(project, flag.id))).body.deleted).toBe(true);
  });
});

describe('derived fields', () => {
  const cases: Array<[string, Record<string, unknown>, boolean, number | null]> = [
    [
      'one group, no properties, rollout 30',
      { groups: [{ properties: [], rollout_percentage: 30 }] },
      true,
      30,
    ],
    ['one group, rollout 100', { groups: [{ rollout_percentage: 100 }] }, true, 100],
    [
      'one group with a property',
      {
        groups: [
          {
            properties: [{ key: 'email', type: 'person', value: 'a@b.c', operator: 'exact' }],
            rollout_percentage: 30,
          },
        ],
      },
      false,
      null,
    ],
    [
      'two groups',
      {
        groups: [
          { properties: [], rollout_percentage: 30 },
          { properties: [], rollout_percentage: 40 },
        ],
      },
      false,
      null,
    ],
    [
      'multivariate',
      {
        groups: [{ properties: [], rollout_percentage: 50 }],
        multivariate: {
          variants: [
            { key: 'a', rollout_percentage: 50 },
            { key: 'b', rollout_percentage: 50 },
          ],
        },
      },
      false,
      null,
    ],
    [
      'group-aggregated',
      { aggregation_group_type_index: 0, groups: [{ properties: [], rollout_percentage: 30 }] },
      false,
      null,
    ],
    ['no groups', { groups: [] }, false, null],
  ];
  for (const [name, filters, simple, rollout] of cases) {
    it(`is_simple_flag=${simple}, rollout_percentage=${rollout} for ${name}`, async () => {
      const flag = await createFlag(t, { filters });
      expect(flag.is_simple_flag).toBe(simple);
      expect(flag.rollout_percentage).toBe(rollout);
      const got = (await t.api('GET', flagPath(t.projectId, flag.id))).body;
      expect(got.is_simple_flag).toBe(simple);
      expect(got.rollout_percentage).toBe(rollout);
    });
  }

  it('recomputes the derived fields after a PATCH of filters', async () => {
    const flag = await createFlag(t, {
      filters: { groups: [{ properties: [], rollout_percentage: 20 }] },
    });
    expect(flag).toMatchObject({ is_simple_flag: true, rollout_percentage: 20 });
    const res = await t.api('PATCH', flagPath(t.projectId, flag.id), {
      filters: {
        groups: [
          {
            properties: [{ key: 'plan', type: 'person', value: 'pro', operator: 'exact' }],
            rollout_percentage: 20,
          },
        ],
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ is_simple_flag: false, rollout_percentage: null });
    const back = await t.api('PATCH', flagPath(t.projectId, flag.id), {
      filters: { groups: [{ properties: [], rollout_percentage: 75 }] },
    });
    expect(back.body).toMatchObject({ is_simple_flag: true, rollout_percentage: 75 });
    expect((await t.api('GET', flagPath(t.projectId, flag.id))).body).toMatchObject({
      is_simple_flag: true,
      rollout_percentage: 75,
    });
  });
});
