import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { addProjectMember } from '../../commands/access/addProjectMember.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import {
  ADMIN,
  createFlag,
  EDIT,
  expectError,
  flagPath,
  flagsPath,
  followPages,
  MEMBER,
  newProject,
  newRole,
  newUser,
} from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

async function withHeader(
  method: string,
  path: string,
  authorization: string | undefined,
  body?: string,
) {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
}

const expect401 = (res: { status: number; body: any; text: string }) => {
  expectError(res, 401, { type: 'authentication_error', code: 'invalid_personal_api_key' });
};

describe('authentication', () => {
  let flag: any;
  let accessId: number;
  beforeAll(async () => {
    flag = await createFlag(t, { key: 'auth-target', name: 'target' });
    const roleId = await newRole(t, EDIT, []);
    accessId = (
      await t.api('POST', `/api/projects/${t.projectId}/feature_flags/${flag.id}/role_access/`, {
        role_id: roleId,
      })
    ).body.id;
  });

  const endpoints = (): Array<[string, string, unknown?]> => [
    ['GET', '/api/projects/'],
    ['GET', flagsPath(t.projectId)],
    ['POST', flagsPath(t.projectId), { key: 'anon-flag' }],
    ['GET', flagPath(t.projectId, flag.id)],
    ['PATCH', flagPath(t.projectId, flag.id), { name: 'anon' }],
    ['DELETE', flagPath(t.projectId, flag.id)],
    ['GET', `/api/projects/${t.projectId}/feature_flags/${flag.id}/role_access/`],
    ['GET', `/api/projects/${t.projectId}/feature_flags/${flag.id}/role_access/${accessId}/`],
    ['DELETE', `/api/projects/${t.projectId}/feature_flags/${flag.id}/role_access/${accessId}/`],
    ['GET', `/api/projects/${t.projectId}/feature_flags/${flag.id}/activity/`],
    ['GET', `/api/projects/${t.projectId}/feature_flags/activity/`],
  ];

  it('answers 401 invalid_personal_api_key without an Authorization header, everywhere', async () => {
    for (const [method, path, body] of endpoints()) {
      const res = await t.api(method, path, body, null);
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(401);
      expect401(res);
    }
  });

  it('answers 401 for an unknown key, everywhere', async () => {
    for (const [method, path, body] of endpoints()) {
      const res = await t.api(method, path, body, 'phx_this_key_does_not_exist');
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(401);
      expect401(res);
    }
  });

  it.each([
    ['a non-Bearer scheme', `Token phx_test_personal_key_0001`],
    ['Basic auth', `Basic ${Buffer.from('admin:pw').toString('base64')}`],
    ['an empty Bearer', 'Bearer '],
    ['a bare key', 'phx_test_personal_key_0001'],
    ['a project API key', 'Bearer phc_test_project_key_0001'],
  ])('answers 401 for %s', async (_name, header) => {
    expect401(await withHeader('GET', flagsPath(t.projectId), header));
  });

  it('changes nothing for an unauthenticated write', async () => {
    const before = (await t.api('GET', flagsPath(t.projectId))).body.count;
    expect401(await t.api('POST', flagsPath(t.projectId), { key: 'should-not-exist' }, null));
    expect401(
      await t.api(
        'PATCH',
        flagPath(t.projectId, flag.id),
        { name: 'anon', deleted: true },
        'phx_wrong',
      ),
    );
    expect((await t.api('GET', flagsPath(t.projectId))).body.count).toBe(before);
    expect((await t.api('GET', flagPath(t.projectId, flag.id))).body).toMatchObject({
      name: 'target',
      deleted: false,
    });
    expect(
      (await t.api('GET', `/api/projects/${t.projectId}/feature_flags/${flag.id}/role_access/`))
        .body.count,
    ).toBe(1);
  });

  it('authenticates before parsing the body: malformed JSON without a key is a 401', async () => {
    expect401(await withHeader('POST', flagsPath(t.projectId), undefined, '{"key": '));
  });

  // Auth decides by the matched route: the router decodes `/%61pi/...` to `/api/...`.
  it('answers 4xx, not 5xx, for a percent-encoded /api path without a key', async () => {
    const res = await withHeader('GET', `/%61pi/projects/${t.projectId}/feature_flags/`, undefined);
    expect401(res);
    const withKey = await withHeader(
      'GET',
      `/%61pi/projects/${t.projectId}/feature_flags/`,
      `Bearer ${t.personalApiKey}`,
    );
    expect([200, 404]).toContain(withKey.status);
  });
});

describe('scopes', () => {
  it('a read-only key may read flags but gets 403 naming feature_flag:write on every write', async () => {
    const reader = await newUser(t, { scopes: ['feature_flag:read'] });
    const flag = await createFlag(t, { name: 'read me' });
    expect((await t.api('GET', flagsPath(t.projectId), undefined, reader.key)).status).toBe(200);
    const got = await t.api('GET', flagPath(t.projectId, flag.id), undefined, reader.key);
    expect(got.status).toBe(200);
    expect(got.body.name).toBe('read me');

    const before = (await t.api('GET', flagsPath(t.projectId))).body.count;
    const writes: Array<[string, string, unknown?]> = [
      ['POST', flagsPath(t.projectId), { key: 'from-reader' }],
      ['PATCH', flagPath(t.projectId, flag.id), { name: 'reader was here' }],
      ['PATCH', flagPath(t.projectId, flag.id), { deleted: true }],
      ['DELETE', flagPath(t.projectId, flag.id)],
    ];
    for (const [method, path, body] of writes) {
      const res = await t.api(method, path, body, reader.key);
      expectError(res, 403, { type: 'authentication_error', code: 'permission_denied' });
      expect(res.body.detail).toContain('feature_flag:write');
    }
    expect((await t.api('GET', flagsPath(t.projectId))).body.count).toBe(before);
    expect((await t.api('GET', flagPath(t.projectId, flag.id))).body).toMatchObject({
      name: 'read me',
      deleted: false,
    });
  });

  it('a key with unrelated scopes gets 403 naming feature_flag:read on reads', async () => {
    const other = await newUser(t, { scopes: ['person:read', 'query:read'] });
    const flag = await createFlag(t);
    for (const path of [
      flagsPath(t.projectId),
      flagPath(t.projectId, flag.id),
      `/api/projects/${t.projectId}/feature_flags/${flag.id}/role_access/`,
    ]) {
      const res = await t.api('GET', path, undefined, other.key);
      expectError(res, 403, { code: 'permission_denied' });
      expect(res.body.detail).toContain('feature_flag:read');
    }
  });

  it('a write scope includes the matching read scope', async () => {
    const writer = await newUser(t, { scopes: ['feature_flag:write'] });
    const res = await t.api('POST', flagsPath(t.projectId), { key: 'from-writer' }, writer.key);
    expect(res.status, res.text).toBe(201);
    expect(
      (await t.api('GET', flagPath(t.projectId, res.body.id), undefined, writer.key)).status,
    ).toBe(200);
    expect((await t.api('GET', flagsPath(t.projectId), undefined, writer.key)).status).toBe(200);
  });

  it('a key without scopes may not read or write flags', async () => {
    const bare = await newUser(t, { scopes: [] });
    const flag = await createFlag(t);
    expectError(await t.api('GET', flagsPath(t.projectId), undefined, bare.key), 403, {
      code: 'permission_denied',
    });
    expectError(await t.api('GET', flagPath(t.projectId, flag.id), undefined, bare.key), 403, {
      code: 'permission_denied',
    });
    expectError(await t.api('POST', flagsPath(t.projectId), { key: 'bare' }, bare.key), 403, {
      code: 'permission_denied',
    });
  });
});

describe('projects', () => {
  it('a project the caller is not a member of answers 404, and nothing is written there', async () => {
    const hidden = await newProject(t);
    const hiddenFlag = await createFlag(
      t,
      { key: 'hidden', name: 'secret' },
      { projectId: hidden },
    );
    const stranger = await newUser(t, { scopes: ['*'] });
    for (const [method, path, body] of [
      ['GET', flagsPath(hidden)],
      ['POST', flagsPath(hidden), { key: 'intruder' }],
      ['GET', flagPath(hidden, hiddenFlag.id)],
      ['PATCH', flagPath(hidden, hiddenFlag.id), { name: 'pwned' }],
      ['GET', `/api/projects/${hidden}/feature_flags/activity/`],
      ['GET', `/api/projects/${hidden}/feature_flags/${hiddenFlag.id}/activity/`],
    ] as Array<[string, string, unknown?]>) {
      const res = await t.api(method, path, body, stranger.key);
      expect(res.status, `${method} ${path}`).toBe(404);
      expectError(res, 404, { code: 'not_found' });
    }
    const list = await t.api('GET', flagsPath(hidden));
    expect(list.body.count).toBe(1);
    expect(list.body.results[0]).toMatchObject({ key: 'hidden', name: 'secret' });
  });

  it('answers 404 for a project id that does not exist or is not a number', async () => {
    expectError(await t.api('GET', flagsPath(987_654)), 404);
    expectError(await t.api('GET', flagsPath('not-a-project')), 404);
  });

  it('a key scoped to some projects sees only those, even where its user is a member', async () => {
    const a = await newProject(t);
    const b = await newProject(t);
    const user = await newUser(t, { projectId: a, scopes: ['*'], scopedProjectIds: [a] });
    await addProjectMember(accessDeps(t.service.ctx), {
      projectId: b,
      userId: user.userId,
      level: MEMBER,
    });
    const flagB = await createFlag(t, {}, { projectId: b });

    expect((await t.api('GET', flagsPath(a), undefined, user.key)).status).toBe(200);
    expectError(await t.api('GET', flagsPath(b), undefined, user.key), 404);
    expectError(await t.api('GET', flagPath(b, flagB.id), undefined, user.key), 404);
    expectError(await t.api('POST', flagsPath(b), { key: 'scoped-out' }, user.key), 404);
    const projects = await t.api('GET', '/api/projects/', undefined, user.key);
    expect(projects.body.results.map((p: any) => p.id)).toEqual([a]);
    expect(projects.body.count).toBe(1);
  });

  it('GET /api/projects/ lists the projects of the caller with their access level, paginated', async () => {
    const p1 = await newProject(t, 'Alpha');
    const p2 = await newProject(t, 'Beta');
    const member = await newUser(t, { projectId: p1, level: MEMBER });
    await addProjectMember(accessDeps(t.service.ctx), {
      projectId: p2,
      userId: member.userId,
      level: ADMIN,
    });

    const res = await t.api('GET', '/api/projects/', undefined, member.key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ count: 2, next: null, previous: null });
    expect(res.body.results).toEqual([
      { id: p1, name: 'Alpha', access_level: MEMBER },
      { id: p2, name: 'Beta', access_level: ADMIN },
    ]);

    const pages = await followPages(t, '/api/projects/?limit=1', member.key);
    expect(pages.map((p) => p.results.map((r: any) => r.id))).toEqual([[p1], [p2]]);
    expect(pages[1].previous).toEqual(expect.any(String));

    // the admin sees the default project and every project created for it here
    const admin = await followPages(t, '/api/projects/?limit=2');
    const ids = admin.flatMap((p) => p.results.map((r: any) => r.id));
    expect(ids).toContain(t.projectId);
    expect(ids).toContain(p1);
    expect(ids).toContain(p2);
    expect(admin[0].count).toBe(ids.length);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('@current stands for the caller\u2019s project', async () => {
    const viaCurrent = await t.api('POST', flagsPath('@current'), { key: 'via-current' });
    expect(viaCurrent.status, viaCurrent.text).toBe(201);
    const got = await t.api('GET', flagPath(t.projectId, viaCurrent.body.id));
    expect(got.status).toBe(200);
    expect(got.body.key).toBe('via-current');
    const back = await t.api('GET', flagPath('@current', viaCurrent.body.id));
    expect(back.body).toEqual(got.body);
    const listed = await followPages(t, `${flagsPath('@current')}?limit=100`);
    expect(listed.flatMap((p) => p.results.map((f: any) => f.id))).toContain(viaCurrent.body.id);
  });

  it('@current resolves to the project of a key scoped elsewhere', async () => {
    const only = await newProject(t);
    const user = await newUser(t, { projectId: only, scopes: ['*'], scopedProjectIds: [only] });
    const res = await t.api('POST', flagsPath('@current'), { key: 'scoped-current' }, user.key);
    expect(res.status, res.text).toBe(201);
    expect((await t.api('GET', flagPath(only, res.body.id))).body.key).toBe('scoped-current');
    expectError(await t.api('GET', flagPath(t.projectId, res.body.id)), 404);
  });

  it('@current answers 404 for a user without any project', async () => {
    const homeless = await newUser(t, { projectId: null, scopes: ['*'] });
    expectError(await t.api('GET', flagsPath('@current'), undefined, homeless.key), 404);
    const projects = await t.api('GET', '/api/projects/', undefined, homeless.key);
    expect(projects.body).toMatchObject({ count: 0, results: [] });
  });
});
