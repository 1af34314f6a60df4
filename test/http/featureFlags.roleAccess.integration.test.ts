import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_EMAIL } from '../../src/bootstrap.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import {
  ADMIN,
  adminUserId,
  createFlag,
  EDIT,
  expectError,
  expectValidation,
  flagPath,
  flagsPath,
  followPages,
  newProject,
  newRole,
  newUser,
  VIEW,
} from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

const accessPath = (projectId: number, flagId: number, id?: number) =>
  `/api/projects/${projectId}/feature_flags/${flagId}/role_access/${id !== undefined ? `${id}/` : ''}`;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

async function grant(flagId: number, roleId: string, key?: string, projectId = t.projectId) {
  return t.api('POST', accessPath(projectId, flagId), { role_id: roleId }, key);
}

describe('role access CRUD', () => {
  it('creates (201), lists, gets and deletes (204) a role access, with the role and flag embedded', async () => {
    const member = await newUser(t, { firstName: 'Rita' });
    const roleId = await newRole(t, EDIT, [member.userId]);
    const flag = await createFlag(t, { key: 'guarded' });

    const created = await grant(flag.id, roleId);
    expect(created.status, created.text).toBe(201);
    const access = created.body;
    expect(Number.isInteger(access.id)).toBe(true);
    expect(access.role_id).toBe(roleId);
    expect(access.added_at).toMatch(ISO);
    expect(access.updated_at).toMatch(ISO);
    expect(access.feature_flag).toMatchObject({
      id: flag.id,
      key: 'guarded',
      deleted: false,
      can_edit: true,
    });
    expect(access.role).toMatchObject({
      id: roleId,
      feature_flags_access_level: EDIT,
      created_by: expect.objectContaining({ id: await adminUserId(t), email: BOOTSTRAP_EMAIL }),
    });
    expect(access.role.name).toEqual(expect.any(String));
    expect(access.role.created_at).toMatch(ISO);
    // members / associated_flags are strings in the contract
    expect(typeof access.role.members).toBe('string');
    expect(access.role.members).toContain(member.email);
    expect(typeof access.role.associated_flags).toBe('string');
    expect(access.role.associated_flags).toContain('guarded');

    const list = await t.api('GET', accessPath(t.projectId, flag.id));
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ count: 1, next: null, previous: null });
    expect(list.body.results).toEqual([access]);

    const one = await t.api('GET', accessPath(t.projectId, flag.id, access.id));
    expect(one.status).toBe(200);
    expect(one.body).toEqual(access);

    const del = await t.api('DELETE', accessPath(t.projectId, flag.id, access.id));
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectError(await t.api('GET', accessPath(t.projectId, flag.id, access.id)), 404);
    expect((await t.api('GET', accessPath(t.projectId, flag.id))).body).toMatchObject({
      count: 0,
      results: [],
    });
    expectError(await t.api('DELETE', accessPath(t.projectId, flag.id, access.id)), 404);
  });

  it("a role's associated_flags lists only flags of the project asked about", async () => {
    const roleId = await newRole(t, EDIT, []);
    const here = await createFlag(t, { key: 'assoc-here' });
    const elsewhere = await newProject(t);
    const there = await createFlag(t, { key: 'assoc-there' }, { projectId: elsewhere });
    expect((await grant(there.id, roleId, undefined, elsewhere)).status).toBe(201);
    const res = await grant(here.id, roleId);
    expect(res.status, res.text).toBe(201);
    const associated = JSON.parse(res.body.role.associated_flags);
    expect(associated).toEqual([expect.objectContaining({ id: here.id, key: 'assoc-here' })]);
    const fromThere = await t.api('GET', accessPath(elsewhere, there.id));
    expect(JSON.parse(fromThere.body.results[0].role.associated_flags)).toEqual([
      expect.objectContaining({ id: there.id, key: 'assoc-there' }),
    ]);
  });

  it('paginates the role access list and the links walk every page', async () => {
    const flag = await createFlag(t);
    const roles = [
      await newRole(t, EDIT, []),
      await newRole(t, VIEW, []),
      await newRole(t, EDIT, []),
    ];
    for (const r of roles) expect((await grant(flag.id, r)).status).toBe(201);
    const pages = await followPages(t, `${accessPath(t.projectId, flag.id)}?limit=2`);
    expect(pages.map((p) => p.results.length)).toEqual([2, 1]);
    expect(pages.every((p) => p.count === 3)).toBe(true);
    expect(pages.flatMap((p) => p.results.map((a: any) => a.role_id)).sort()).toEqual(
      [...roles].sort(),
    );
    expect(pages[1].previous).toEqual(expect.any(String));
  });

  it('rejects a missing, malformed, unknown or duplicate role_id with 400 attr role_id', async () => {
    const flag = await createFlag(t);
    expectValidation(await t.api('POST', accessPath(t.projectId, flag.id), {}), 'role_id');
    expectValidation(await grant(flag.id, 'not-a-uuid'), 'role_id');
    expectValidation(await grant(flag.id, randomUUID()), 'role_id');
    const roleId = await newRole(t, EDIT, []);
    expect((await grant(flag.id, roleId)).status).toBe(201);
    expectValidation(await grant(flag.id, roleId), 'role_id', 'unique');
    expect((await t.api('GET', accessPath(t.projectId, flag.id))).body.count).toBe(1);
  });

  it('treats role ids case-insensitively: an upper-case UUID names the same role', async () => {
    const owner = await newUser(t);
    const member = await newUser(t);
    const roleId = await newRole(t, EDIT, [member.userId]);
    const flag = await createFlag(t, { name: 'upper' }, { key: owner.key });
    const upper = await grant(flag.id, roleId.toUpperCase(), owner.key);
    expect(upper.status, upper.text).toBe(201);
    expect(upper.body.role_id).toBe(roleId);
    expect(upper.body.role.id).toBe(roleId);
    // the same role in another spelling is a duplicate
    expectValidation(await grant(flag.id, roleId, owner.key), 'role_id', 'unique');
    expect((await t.api('GET', accessPath(t.projectId, flag.id))).body.count).toBe(1);
    // and membership of that role grants edit rights, on the read side and on the write side alike
    const got = await t.api('GET', flagPath(t.projectId, flag.id), undefined, member.key);
    expect(got.body.can_edit).toBe(true);
    const res = await t.api(
      'PATCH',
      flagPath(t.projectId, flag.id),
      { name: 'edited by member' },
      member.key,
    );
    expect(res.status, res.text).toBe(200);
  });

  it('lets only one of two simultaneous grants of the same role succeed', async () => {
    const roleId = await newRole(t, EDIT, []);
    const flag = await createFlag(t);
    const results = await Promise.all([
      grant(flag.id, roleId),
      grant(flag.id, roleId),
      grant(flag.id, roleId),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 400, 400]);
    expect((await t.api('GET', accessPath(t.projectId, flag.id))).body.count).toBe(1);
  });

  it('answers 404 for a flag that does not exist or belongs to another project', async () => {
    const roleId = await newRole(t, EDIT, []);
    expectError(await grant(999_999, roleId), 404);
    expectError(await t.api('GET', accessPath(t.projectId, 999_999)), 404);

    const elsewhere = await newProject(t);
    const foreign = await createFlag(t, {}, { projectId: elsewhere });
    expectError(await grant(foreign.id, roleId), 404);
    expectError(await t.api('GET', accessPath(t.projectId, foreign.id)), 404);
    const granted = await grant(foreign.id, roleId, undefined, elsewhere);
    expect(granted.status).toBe(201);
    expectError(await t.api('GET', accessPath(t.projectId, foreign.id, granted.body.id)), 404);
    expectError(await t.api('DELETE', accessPath(t.projectId, foreign.id, granted.body.id)), 404);
    expect((await t.api('GET', accessPath(elsewhere, foreign.id))).body.count).toBe(1);
  });

  it('answers 404 for a role access id that belongs to another flag', async () => {
    const roleId = await newRole(t, EDIT, []);
    const a = await createFlag(t);
    const b = await createFlag(t);
    const access = await grant(a.id, roleId);
    expectError(await t.api('GET', accessPath(t.projectId, b.id, access.body.id)), 404);
    expectError(await t.api('DELETE', accessPath(t.projectId, b.id, access.body.id)), 404);
    expect((await t.api('GET', accessPath(t.projectId, a.id, access.body.id))).status).toBe(200);
  });

  it('needs feature_flag:write to add or remove, feature_flag:read to list', async () => {
    const reader = await newUser(t, { scopes: ['feature_flag:read'] });
    const roleId = await newRole(t, EDIT, []);
    const flag = await createFlag(t);
    const denied = await grant(flag.id, roleId, reader.key);
    expectError(denied, 403, { code: 'permission_denied' });
    expect(denied.body.detail).toContain('feature_flag:write');
    const access = await grant(flag.id, roleId);
    const list = await t.api('GET', accessPath(t.projectId, flag.id), undefined, reader.key);
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(1);
    expectError(
      await t.api(
        'DELETE',
        accessPath(t.projectId, flag.id, access.body.id),
        undefined,
        reader.key,
      ),
      403,
    );
    expect((await t.api('GET', accessPath(t.projectId, flag.id))).body.count).toBe(1);
  });
});

describe('who may edit a flag with role access entries', () => {
  let creator: Awaited<ReturnType<typeof newUser>>;
  let editor: Awaited<ReturnType<typeof newUser>>;
  let viewer: Awaited<ReturnType<typeof newUser>>;
  let outsider: Awaited<ReturnType<typeof newUser>>;
  let otherEditor: Awaited<ReturnType<typeof newUser>>;
  let projectAdmin: Awaited<ReturnType<typeof newUser>>;
  let editRole: string;
  let viewRole: string;

  beforeAll(async () => {
    creator = await newUser(t, { firstName: 'Creator' });
    editor = await newUser(t, { firstName: 'Editor' });
    viewer = await newUser(t, { firstName: 'Viewer' });
    outsider = await newUser(t, { firstName: 'Outsider' });
    otherEditor = await newUser(t, { firstName: 'OtherEditor' });
    projectAdmin = await newUser(t, { firstName: 'Admin', level: ADMIN });
    editRole = await newRole(t, EDIT, [editor.userId]);
    viewRole = await newRole(t, VIEW, [viewer.userId]);
    // an edit-level role that is never listed on the flag
    await newRole(t, EDIT, [otherEditor.userId]);
  });

  async function guardedFlag(): Promise<any> {
    const flag = await createFlag(t, { name: 'guarded' }, { key: creator.key });
    expect((await grant(flag.id, editRole, creator.key)).status).toBe(201);
    expect((await grant(flag.id, viewRole, creator.key)).status).toBe(201);
    return flag;
  }

  const canEditAs = async (flagId: number, key: string) => {
    const res = await t.api('GET', flagPath(t.projectId, flagId), undefined, key);
    expect(res.status, res.text).toBe(200);
    return res.body.can_edit;
  };

  it('can_edit reflects the caller on GET, in the list and in the role access embedding', async () => {
    const flag = await guardedFlag();
    expect(await canEditAs(flag.id, creator.key)).toBe(true);
    expect(await canEditAs(flag.id, editor.key)).toBe(true);
    expect(await canEditAs(flag.id, projectAdmin.key)).toBe(true);
    expect(await canEditAs(flag.id, t.personalApiKey)).toBe(true); // project owner
    expect(await canEditAs(flag.id, viewer.key)).toBe(false);
    expect(await canEditAs(flag.id, outsider.key)).toBe(false);
    expect(await canEditAs(flag.id, otherEditor.key)).toBe(false);

    const listed = async (key: string) =>
      (await followPages(t, `${flagsPath(t.projectId)}?limit=50`, key))
        .flatMap((p) => p.results)
        .find((f: any) => f.id === flag.id);
    expect((await listed(outsider.key)).can_edit).toBe(false);
    expect((await listed(editor.key)).can_edit).toBe(true);

    const accessAsOutsider = await t.api(
      'GET',
      accessPath(t.projectId, flag.id),
      undefined,
      outsider.key,
    );
    expect(accessAsOutsider.body.results.every((a: any) => a.feature_flag.can_edit === false)).toBe(
      true,
    );
    const accessAsEditor = await t.api(
      'GET',
      accessPath(t.projectId, flag.id),
      undefined,
      editor.key,
    );
    expect(accessAsEditor.body.results.every((a: any) => a.feature_flag.can_edit === true)).toBe(
      true,
    );
  });

  it.each([
    ['a member of no listed role', () => outsider],
    ['a member of a listed view-level role', () => viewer],
    ['a member of an edit-level role that is not listed', () => otherEditor],
  ])('answers 403 on PATCH to %s and leaves the flag unchanged', async (_who, who) => {
    const flag = await guardedFlag();
    const res = await t.api(
      'PATCH',
      flagPath(t.projectId, flag.id),
      { name: 'hacked', active: false },
      who().key,
    );
    expectError(res, 403, { type: 'authentication_error', code: 'permission_denied' });
    const del = await t.api('PATCH', flagPath(t.projectId, flag.id), { deleted: true }, who().key);
    expectError(del, 403, { code: 'permission_denied' });
    const got = await t.api('GET', flagPath(t.projectId, flag.id));
    expect(got.body).toMatchObject({ name: 'guarded', active: true, deleted: false });
  });

  it.each([
    ['the creator', () => creator],
    ['a member of a listed edit-level role', () => editor],
    ['a project admin', () => projectAdmin],
  ])('lets %s PATCH (200)', async (_who, who) => {
    const flag = await guardedFlag();
    const res = await t.api('PATCH', flagPath(t.projectId, flag.id), { name: 'edited' }, who().key);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ name: 'edited', can_edit: true });
    expect((await t.api('GET', flagPath(t.projectId, flag.id))).body.name).toBe('edited');
  });

  it('refuses role access changes from someone who may not edit the flag', async () => {
    const flag = await guardedFlag();
    const extraRole = await newRole(t, EDIT, [outsider.userId]);
    expectError(await grant(flag.id, extraRole, outsider.key), 403, { code: 'permission_denied' });
    const entries = (await t.api('GET', accessPath(t.projectId, flag.id))).body.results;
    expect(entries).toHaveLength(2);
    expectError(
      await t.api(
        'DELETE',
        accessPath(t.projectId, flag.id, entries[0].id),
        undefined,
        outsider.key,
      ),
      403,
    );
    expect((await t.api('GET', accessPath(t.projectId, flag.id))).body.count).toBe(2);
  });

  it('once every entry is removed, anyone with write scope may edit again', async () => {
    const flag = await guardedFlag();
    expect(await canEditAs(flag.id, outsider.key)).toBe(false);
    const entries = (await t.api('GET', accessPath(t.projectId, flag.id))).body.results;
    for (const e of entries) {
      expect(
        (await t.api('DELETE', accessPath(t.projectId, flag.id, e.id), undefined, creator.key))
          .status,
      ).toBe(204);
    }
    expect(await canEditAs(flag.id, outsider.key)).toBe(true);
    const res = await t.api(
      'PATCH',
      flagPath(t.projectId, flag.id),
      { name: 'free again' },
      outsider.key,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.name).toBe('free again');
  });

  it('an editor who removes the entry of their own role loses edit rights while other entries remain', async () => {
    const flag = await guardedFlag();
    const entries = (await t.api('GET', accessPath(t.projectId, flag.id))).body.results;
    const own = entries.find((e: any) => e.role_id === editRole);
    expect(
      (await t.api('DELETE', accessPath(t.projectId, flag.id, own.id), undefined, editor.key))
        .status,
    ).toBe(204);
    expect(await canEditAs(flag.id, editor.key)).toBe(false);
    expectError(
      await t.api('PATCH', flagPath(t.projectId, flag.id), { name: 'late' }, editor.key),
      403,
    );
  });

  it('without role access entries, any member with write scope may edit, including a view-level role member', async () => {
    const flag = await createFlag(t, { name: 'open' }, { key: creator.key });
    for (const who of [outsider, viewer, otherEditor]) {
      expect(await canEditAs(flag.id, who.key)).toBe(true);
      const res = await t.api(
        'PATCH',
        flagPath(t.projectId, flag.id),
        { name: `by ${who.userId}` },
        who.key,
      );
      expect(res.status, res.text).toBe(200);
    }
    expect((await t.api('GET', flagPath(t.projectId, flag.id))).body.name).toBe(
      `by ${otherEditor.userId}`,
    );
  });

  it('locks a flag as soon as a role is listed, even for the member who listed it if not otherwise allowed', async () => {
    const flag = await createFlag(t, { name: 'soon locked' }, { key: creator.key });
    // the outsider may add an entry while the flag is open ...
    const res = await grant(flag.id, viewRole, outsider.key);
    expect(res.status, res.text).toBe(201);
    expect(res.body.feature_flag.can_edit).toBe(false);
    // ... and is then locked out
    expectError(
      await t.api('PATCH', flagPath(t.projectId, flag.id), { name: 'nope' }, outsider.key),
      403,
    );
    expect(await canEditAs(flag.id, creator.key)).toBe(true);
  });
});
