import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_EMAIL } from '../../src/bootstrap.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import {
  adminUserId,
  createFlag,
  EDIT,
  expectError,
  flagPath,
  flagsPath,
  followPages,
  newProject,
  newRole,
  newUser,
} from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

const activityPath = (projectId: number, flagId: number) =>
  `/api/projects/${projectId}/feature_flags/${flagId}/activity/`;
const allActivityPath = (projectId: number) => `/api/projects/${projectId}/feature_flags/activity/`;

async function activity(projectId: number, flagId: number, key?: string): Promise<any[]> {
  const res = await t.api('GET', `${activityPath(projectId, flagId)}?limit=1000`, undefined, key);
  expect(res.status, res.text).toBe(200);
  expect(res.body.count).toBe(res.body.results.length);
  return res.body.results;
}

const changes = (entry: any) =>
  entry.detail.changes.map((c: any) => ({ field: c.field, before: c.before, after: c.after }));
const changeOf = (entry: any, field: string) => changes(entry).find((c: any) => c.field === field);

describe('activity of one flag', () => {
  it('records creation with the caller, scope, item id and every field as null → value', async () => {
    const flag = await createFlag(t, { key: 'act-created', name: 'First', tags: ['x'] });
    const entries = await activity(t.projectId, flag.id);
    expect(entries).toHaveLength(1);
    const [created] = entries;
    expect(created).toMatchObject({
      activity: 'created',
      scope: 'FeatureFlag',
      item_id: String(flag.id),
      user: { id: await adminUserId(t), email: BOOTSTRAP_EMAIL, first_name: 'Admin' },
      detail: { id: String(flag.id) },
    });
    expect(Date.parse(created.created_at)).not.toBeNaN();
    expect(changeOf(created, 'key')).toEqual({ field: 'key', before: null, after: 'act-created' });
    expect(changeOf(created, 'name')).toEqual({ field: 'name', before: null, after: 'First' });
    expect(changeOf(created, 'tags')).toEqual({ field: 'tags', before: null, after: ['x'] });
    expect(changeOf(created, 'active')).toEqual({ field: 'active', before: null, after: true });
    expect(changeOf(created, 'filters').after).toEqual(flag.filters);
  });

  it('records create, patch, soft delete and restore newest first, with before/after of each change', async () => {
    const flag = await createFlag(t, {
      key: 'act-life',
      name: 'v1',
      filters: { groups: [{ properties: [], rollout_percentage: 10 }] },
    });
    const patched = await t.api('PATCH', flagPath(t.projectId, flag.id), {
      name: 'v2',
      active: false,
      filters: { groups: [{ properties: [], rollout_percentage: 90 }] },
    });
    expect(patched.status, patched.text).toBe(200);
    expect((await t.api('PATCH', flagPath(t.projectId, flag.id), { deleted: true })).status).toBe(
      200,
    );
    expect((await t.api('PATCH', flagPath(t.projectId, flag.id), { deleted: false })).status).toBe(
      200,
    );
    expect((await t.api('PATCH', flagPath(t.projectId, flag.id), { name: 'v3' })).status).toBe(200);

    const entries = await activity(t.projectId, flag.id);
    expect(entries.map((e) => e.activity)).toEqual([
      'updated',
      'restored',
      'deleted',
      'updated',
      'created',
    ]);
    expect(entries.every((e) => e.item_id === String(flag.id) && e.scope === 'FeatureFlag')).toBe(
      true,
    );
    const times = entries.map((e) => Date.parse(e.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);

    const [rename, restored, deleted, update] = entries;
    expect(changes(rename)).toEqual([{ field: 'name', before: 'v2', after: 'v3' }]);
    expect(changes(restored)).toEqual([{ field: 'deleted', before: true, after: false }]);
    expect(changes(deleted)).toEqual([{ field: 'deleted', before: false, after: true }]);
    // only the fields that changed, each with its value before and after
    expect(
      changes(update)
        .map((c: any) => c.field)
        .sort(),
    ).toEqual(['active', 'filters', 'name']);
    expect(changeOf(update, 'name')).toEqual({ field: 'name', before: 'v1', after: 'v2' });
    expect(changeOf(update, 'active')).toEqual({ field: 'active', before: true, after: false });
    expect(changeOf(update, 'filters').before.groups[0].rollout_percentage).toBe(10);
    expect(changeOf(update, 'filters').after.groups[0].rollout_percentage).toBe(90);
    expect(changeOf(update, 'filters').after).toEqual(patched.body.filters);
  });

  it('records who made each change', async () => {
    const alice = await newUser(t, { firstName: 'Alice' });
    const bob = await newUser(t, { firstName: 'Bob' });
    const flag = await createFlag(t, {}, { key: alice.key });
    expect(
      (await t.api('PATCH', flagPath(t.projectId, flag.id), { name: 'by bob' }, bob.key)).status,
    ).toBe(200);
    const [update, created] = await activity(t.projectId, flag.id);
    expect(created.user).toMatchObject({
      id: alice.userId,
      first_name: 'Alice',
      email: alice.email,
    });
    expect(update.user).toMatchObject({ id: bob.userId, first_name: 'Bob', email: bob.email });
  });

  it('records role access added and removed', async () => {
    const roleId = await newRole(t, EDIT, []);
    const flag = await createFlag(t);
    const granted = await t.api(
      'POST',
      `/api/projects/${t.projectId}/feature_flags/${flag.id}/role_access/`,
      { role_id: roleId },
    );
    expect(granted.status).toBe(201);
    const del = await t.api(
      'DELETE',
      `/api/projects/${t.projectId}/feature_flags/${flag.id}/role_access/${granted.body.id}/`,
    );
    expect(del.status).toBe(204);
    const entries = await activity(t.projectId, flag.id);
    expect(entries.map((e) => e.activity)).toEqual([
      'role_access_removed',
      'role_access_added',
      'created',
    ]);
    expect(changeOf(entries[1], 'role_access').after).toMatchObject({ role_id: roleId });
    expect(changeOf(entries[0], 'role_access').before).toMatchObject({ role_id: roleId });
    expect(changeOf(entries[0], 'role_access').after).toBeNull();
  });

  it('records a combined change-and-delete PATCH as an update followed by a deletion', async () => {
    const flag = await createFlag(t, { name: 'going' });
    const res = await t.api('PATCH', flagPath(t.projectId, flag.id), {
      name: 'gone',
      deleted: true,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ name: 'gone', deleted: true });
    const entries = await activity(t.projectId, flag.id);
    expect(entries.map((e) => e.activity)).toEqual(['deleted', 'updated', 'created']);
    expect(changes(entries[1])).toEqual([{ field: 'name', before: 'going', after: 'gone' }]);
  });

  it('records nothing for a PATCH that changes nothing, including filters re-sent as originally written', async () => {
    const filters = { groups: [{ properties: [], rollout_percentage: 42 }] };
    const flag = await createFlag(t, { name: 'same', filters });
    const res = await t.api('PATCH', flagPath(t.projectId, flag.id), {
      name: 'same',
      filters,
      active: true,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.filters).toEqual(flag.filters);
    expect((await t.api('PATCH', flagPath(t.projectId, flag.id), { deleted: false })).status).toBe(
      200,
    );
    const entries = await activity(t.projectId, flag.id);
    expect(entries.map((e) => e.activity)).toEqual(['created']);
  });

  it('records nothing for rejected writes', async () => {
    const owner = await newUser(t);
    const outsider = await newUser(t);
    const flag = await createFlag(t, {}, { key: owner.key });
    const roleId = await newRole(t, EDIT, []);
    expect(
      (
        await t.api(
          'POST',
          `/api/projects/${t.projectId}/feature_flags/${flag.id}/role_access/`,
          { role_id: roleId },
          owner.key,
        )
      ).status,
    ).toBe(201);
    expectError(
      await t.api('PATCH', flagPath(t.projectId, flag.id), { name: 'nope' }, outsider.key),
      403,
    );
    expectError(
      await t.api('PATCH', flagPath(t.projectId, flag.id), { key: 'bad key' }, owner.key),
      400,
    );
    const entries = await activity(t.projectId, flag.id);
    expect(entries.map((e) => e.activity)).toEqual(['role_access_added', 'created']);
  });

  it('keeps every one of several simultaneous PATCHes, each before being the previous after', async () => {
    const flag = await createFlag(t, { tags: [] });
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((i) =>
        t.api('PATCH', flagPath(t.projectId, flag.id), { tags: [`t${i}`] }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const updates = (await activity(t.projectId, flag.id))
      .filter((e) => e.activity === 'updated')
      .reverse();
    expect(updates).toHaveLength(5);
    let before: unknown = [];
    for (const u of updates) {
      const c = changeOf(u, 'tags');
      expect(c.before).toEqual(before);
      before = c.after;
    }
    expect(updates.map((u) => changeOf(u, 'tags').after[0]).sort()).toEqual([
      't1',
      't2',
      't3',
      't4',
      't5',
    ]);
    expect((await t.api('GET', flagPath(t.projectId, flag.id))).body.tags).toEqual(before);
  });

  it('is paginated, newest first, and next/previous links walk it', async () => {
    const flag = await createFlag(t, { name: 'n0' });
    for (let i = 1; i <= 4; i++)
      expect((await t.api('PATCH', flagPath(t.projectId, flag.id), { name: `n${i}` })).status).toBe(
        200,
      );
    const first = await t.api('GET', `${activityPath(t.projectId, flag.id)}?limit=2`);
    expect(first.body.count).toBe(5);
    expect(first.body.previous).toBeNull();
    const pages = await followPages(t, `${activityPath(t.projectId, flag.id)}?limit=2`);
    expect(pages.map((p) => p.results.length)).toEqual([2, 2, 1]);
    const all = pages.flatMap((p) => p.results);
    expect(all.map((e) => e.activity)).toEqual([
      'updated',
      'updated',
      'updated',
      'updated',
      'created',
    ]);
    expect(all.slice(0, 4).map((e) => changeOf(e, 'name').after)).toEqual(['n4', 'n3', 'n2', 'n1']);
    expect(pages[2].previous).toEqual(expect.any(String));
  });

  it('answers 404 for a flag that does not exist or belongs to another project', async () => {
    expectError(await t.api('GET', activityPath(t.projectId, 987_654)), 404);
    const elsewhere = await newProject(t);
    const foreign = await createFlag(t, {}, { projectId: elsewhere });
    expectError(await t.api('GET', activityPath(t.projectId, foreign.id)), 404);
    expect((await t.api('GET', activityPath(elsewhere, foreign.id))).status).toBe(200);
  });

  it('is still readable for a soft-deleted flag', async () => {
    const flag = await createFlag(t);
    await t.api('PATCH', flagPath(t.projectId, flag.id), { deleted: true });
    const entries = await activity(t.projectId, flag.id);
    expect(entries.map((e) => e.activity)).toEqual(['deleted', 'created']);
  });
});

describe('activity of all flags', () => {
  it('lists the entries of every flag of the project, newest first, and only of that project', async () => {
    const project = await newProject(t);
    const other = await newProject(t);
    const a = await createFlag(t, { key: 'all-a' }, { projectId: project });
    const b = await createFlag(t, { key: 'all-b' }, { projectId: project });
    await createFlag(t, { key: 'all-elsewhere' }, { projectId: other });
    expect((await t.api('PATCH', flagPath(project, a.id), { name: 'a2' })).status).toBe(200);
    expect((await t.api('PATCH', flagPath(project, b.id), { deleted: true })).status).toBe(200);

    const res = await t.api('GET', allActivityPath(project));
    expect(res.status, res.text).toBe(200);
    expect(res.body.count).toBe(4);
    expect(res.body.results.map((e: any) => [e.item_id, e.activity])).toEqual([
      [String(b.id), 'deleted'],
      [String(a.id), 'updated'],
      [String(b.id), 'created'],
      [String(a.id), 'created'],
    ]);
    expect(changeOf(res.body.results[1], 'name')).toEqual({
      field: 'name',
      before: '',
      after: 'a2',
    });
    expect(
      res.body.results.every(
        (e: any) => e.scope === 'FeatureFlag' && e.user?.email === BOOTSTRAP_EMAIL,
      ),
    ).toBe(true);

    const pages = await followPages(t, `${allActivityPath(project)}?limit=3`);
    expect(pages.map((p) => p.results.length)).toEqual([3, 1]);
    expect(pages.flatMap((p) => p.results.map((e: any) => e.id))).toEqual(
      res.body.results.map((e: any) => e.id),
    );

    const otherRes = await t.api('GET', allActivityPath(other));
    expect(otherRes.body.count).toBe(1);
    expect(otherRes.body.results[0].detail.name).toBe('all-elsewhere');
  });

  it('is empty for a project without flags', async () => {
    const project = await newProject(t);
    const res = await t.api('GET', allActivityPath(project));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ count: 0, next: null, previous: null, results: [] });
  });
});

describe('activity scope', () => {
  it('needs activity_log:read: a flag-only key gets 403 naming the scope', async () => {
    const flagsOnly = await newUser(t, { scopes: ['feature_flag:write'] });
    const flag = await createFlag(t, {}, { key: flagsOnly.key });
    for (const path of [activityPath(t.projectId, flag.id), allActivityPath(t.projectId)]) {
      const res = await t.api('GET', path, undefined, flagsOnly.key);
      expectError(res, 403, { type: 'authentication_error', code: 'permission_denied' });
      expect(res.body.detail).toContain('activity_log:read');
    }
  });

  it('is readable with only activity_log:read', async () => {
    const auditor = await newUser(t, { scopes: ['activity_log:read'] });
    const flag = await createFlag(t);
    expect(
      (await t.api('GET', activityPath(t.projectId, flag.id), undefined, auditor.key)).status,
    ).toBe(200);
    expect((await t.api('GET', allActivityPath(t.projectId), undefined, auditor.key)).status).toBe(
      200,
    );
    // but that key may not read the flags themselves
    expectError(await t.api('GET', flagsPath(t.projectId), undefined, auditor.key), 403);
  });

  it('answers 401 without a key', async () => {
    const flag = await createFlag(t);
    expectError(await t.api('GET', activityPath(t.projectId, flag.id), undefined, null), 401, {
      code: 'invalid_personal_api_key',
    });
    expectError(await t.api('GET', allActivityPath(t.projectId), undefined, null), 401, {
      code: 'invalid_personal_api_key',
    });
  });
});
