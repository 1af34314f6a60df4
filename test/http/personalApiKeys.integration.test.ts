import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectError, expectValidation, newUser } from './helpers.ts';

// /api/personal_api_keys/ as PostHog answers it (posthog/api/personal_api_key.py), with the
// scopes hogstream adds because its only callers are keys (docs/DECISIONS.md, "Key management").
let t: TestService;
beforeAll(async () => {
  t = await startTestService({}, { clickhouse: false });
});
afterAll(async () => t?.close());

const KEYS = '/api/personal_api_keys/';
const keyPath = (id: string) => `${KEYS}${id}/`;
const MANAGE = ['personal_api_key:write', 'feature_flag:write', 'project:read'];
const expect401 = (res: { status: number; body: any; text: string }) =>
  expectError(res, 401, { type: 'authentication_error', code: 'invalid_personal_api_key' });

describe('personal API keys: shapes', () => {
  it('creates a key showing its value once, then lists and retrieves it masked', async () => {
    const user = await newUser(t, { scopes: MANAGE });
    const created = await t.api(
      'POST',
      KEYS,
      { label: 'CI deploys', scopes: ['feature_flag:read'], scoped_teams: [t.projectId] },
      user.key,
    );
    expect(created.status, created.text).toBe(201);
    const value: string = created.body.value;
    expect(value).toMatch(/^phx_[A-Za-z0-9_-]{32}$/);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      label: 'CI deploys',
      value,
      mask_value: `phx_...${value.slice(-4)}`,
      created_at: expect.any(String),
      last_used_at: null,
      user_id: user.userId,
      scopes: ['feature_flag:read'],
      scoped_teams: [t.projectId],
      scoped_organizations: [],
      last_rolled_at: null,
    });

    const list = await t.api('GET', KEYS, undefined, user.key);
    expect(list.status, list.text).toBe(200);
    // A plain array, newest first (PostHog does not page it: at most ten keys a user).
    expect(list.body.map((k: any) => k.id)).toHaveLength(2);
    expect(list.body[0]).toEqual({ ...created.body, value: null });
    expect(list.text).not.toContain(value);

    const one = await t.api('GET', keyPath(created.body.id), undefined, user.key);
    expect(one.body).toEqual({ ...created.body, value: null });
    // The new key works, with what it was given.
    expect(
      (await t.api('GET', `/api/projects/${t.projectId}/feature_flags/`, undefined, value)).status,
    ).toBe(200);
  });

  it('answers @current with the key used, whatever its scopes (as PostHog)', async () => {
    const user = await newUser(t, { scopes: ['feature_flag:read'] });
    const res = await t.api('GET', keyPath('@current'), undefined, user.key);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      user_id: user.userId,
      scopes: ['feature_flag:read'],
      value: null,
    });
    expect(res.body.mask_value).toBe(`phx_...${user.key.slice(-4)}`);
  });

  it('patches the label and scopes; what is left out stays, and the new scopes hold at once', async () => {
    const user = await newUser(t, { scopes: MANAGE });
    const flags = `/api/projects/${t.projectId}/feature_flags/`;
    const { body: key } = await t.api(
      'POST',
      KEYS,
      { label: 'a', scopes: ['feature_flag:write'] },
      user.key,
    );
    expect((await t.api('POST', flags, { key: `k-${Date.now()}` }, key.value)).status).toBe(201);
    const patched = await t.api('PATCH', keyPath(key.id), { label: 'renamed' }, user.key);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({
      label: 'renamed',
      scopes: ['feature_flag:write'],
      value: null,
    });
    const narrowed = await t.api(
      'PATCH',
      keyPath(key.id),
      { scopes: ['feature_flag:read'] },
      user.key,
    );
    expect(narrowed.body).toMatchObject({ label: 'renamed', scopes: ['feature_flag:read'] });
    expectError(await t.api('POST', flags, { key: `k-${Date.now()}` }, key.value), 403);
    expect((await t.api('GET', flags, undefined, key.value)).status).toBe(200);
  });
});

describe('personal API keys: revoke and roll take effect on the next request', () => {
  it('a revoked key is refused on the very next request, and is gone from the list', async () => {
    const user = await newUser(t, { scopes: MANAGE });
    const { body: leaked } = await t.api(
      'POST',
      KEYS,
      { label: 'leaked', scopes: ['*'] },
      t.personalApiKey,
    );
    // (the admin's own key: the admin holds *)
    expect((await t.api('GET', '/api/projects/', undefined, leaked.value)).status).toBe(200);
    const revoked = await t.api('DELETE', keyPath(leaked.id), undefined, t.personalApiKey);
    expect(revoked.status, revoked.text).toBe(204);
    expect401(await t.api('GET', '/api/projects/', undefined, leaked.value));
    expect(
      (await t.api('GET', KEYS, undefined, t.personalApiKey)).body.map((k: any) => k.id),
    ).not.toContain(leaked.id);
    expectError(await t.api('DELETE', keyPath(leaked.id), undefined, t.personalApiKey), 404);
    // Capture with a personal key (phx_ + project_id) refuses it too.
    const capture = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        api_key: leaked.value,
        project_id: t.projectId,
        batch: [{ event: 'e', distinct_id: 'd' }],
      }),
    });
    expect(capture.status).toBe(401);
    expect(user.userId).toBeGreaterThan(0);
  });

  it('a rolled key answers its new value once; the old value is refused at once, the new one works', async () => {
    const user = await newUser(t, { scopes: MANAGE });
    const { body: key } = await t.api(
      'POST',
      KEYS,
      { label: 'ci', scopes: ['project:read'] },
      user.key,
    );
    const rolled = await t.api('POST', `${keyPath(key.id)}roll/`, undefined, user.key);
    expect(rolled.status, rolled.text).toBe(200);
    expect(rolled.body).toMatchObject({ id: key.id, label: 'ci', scopes: ['project:read'] });
    expect(rolled.body.value).toMatch(/^phx_/);
    expect(rolled.body.value).not.toBe(key.value);
    expect(rolled.body.mask_value).toBe(`phx_...${rolled.body.value.slice(-4)}`);
    expect(Date.parse(rolled.body.last_rolled_at)).toBeGreaterThan(0);
    expect401(await t.api('GET', '/api/projects/', undefined, key.value));
    expect((await t.api('GET', '/api/projects/', undefined, rolled.body.value)).status).toBe(200);
  });

  it('rolling the key in use answers the new value and refuses the old one next', async () => {
    const user = await newUser(t, { scopes: MANAGE });
    const rolled = await t.api('POST', `${keyPath('@current')}roll/`, undefined, user.key);
    expect(rolled.status, rolled.text).toBe(200);
    expect401(await t.api('GET', KEYS, undefined, user.key));
    expect((await t.api('GET', KEYS, undefined, rolled.body.value)).status).toBe(200);
  });
});

describe('personal API keys: scopes and bad input', () => {
  it('needs personal_api_key:read to list and :write to change', async () => {
    const reader = await newUser(t, { scopes: ['personal_api_key:read'] });
    const none = await newUser(t, { scopes: ['feature_flag:read'] });
    expectError(await t.api('GET', KEYS, undefined, none.key), 403, { code: 'permission_denied' });
    expect((await t.api('GET', KEYS, undefined, reader.key)).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', KEYS, { label: 'x', scopes: ['feature_flag:read'] }],
      ['PATCH', keyPath('@current'), { label: 'x' }],
      ['POST', `${keyPath('@current')}roll/`, undefined],
      ['DELETE', keyPath('@current'), undefined],
    ] as const)
      expectError(await t.api(method, path, body, reader.key), 403, { code: 'permission_denied' });
  });

  it('a key cannot grant what it does not hold: a scope, *, or a project it cannot reach', async () => {
    const user = await newUser(t, { scopes: MANAGE, scopedProjectIds: [t.projectId] });
    expectError(await t.api('POST', KEYS, { label: 'x', scopes: ['*'] }, user.key), 403);
    expectError(await t.api('POST', KEYS, { label: 'x', scopes: ['person:read'] }, user.key), 403);
    // not limited to projects, while the key used is
    expectError(
      await t.api('POST', KEYS, { label: 'x', scopes: ['feature_flag:read'] }, user.key),
      403,
    );
    expectValidation(
      await t.api(
        'POST',
        KEYS,
        { label: 'x', scopes: ['feature_flag:read'], scoped_teams: [999_999] },
        user.key,
      ),
      'scoped_teams',
    );
    const ok = await t.api(
      'POST',
      KEYS,
      { label: 'x', scopes: ['feature_flag:read'], scoped_teams: [t.projectId] },
      user.key,
    );
    expect(ok.status, ok.text).toBe(201);
    expectError(
      await t.api('PATCH', keyPath(ok.body.id), { scopes: ['person:write'] }, user.key),
      403,
    );
  });

  it('refuses unknown scopes, bad labels and organizations with 400', async () => {
    expectValidation(
      await t.api('POST', KEYS, { label: 'x', scopes: ['feature_flag:admin'] }),
      'scopes',
    );
    expectValidation(await t.api('POST', KEYS, { label: 'x', scopes: [] }), 'scopes');
    expectValidation(await t.api('POST', KEYS, { label: 'x'.repeat(41), scopes: ['*'] }), 'label');
    expectValidation(await t.api('POST', KEYS, { scopes: ['*'] }), 'label');
    expectValidation(
      await t.api('POST', KEYS, {
        label: 'x',
        scopes: ['*'],
        scoped_organizations: ['0190a0b0-0000-7000-8000-000000000001'],
      }),
      'scoped_organizations',
    );
  });

  it("answers another user's key, a word and an unknown id as 404", async () => {
    const other = await newUser(t, { scopes: MANAGE });
    const { body: theirs } = await t.api('GET', keyPath('@current'), undefined, other.key);
    for (const id of [theirs.id, 'nope', '0190a0b0-0000-7000-8000-000000000099']) {
      expectError(await t.api('GET', keyPath(id)), 404, { code: 'not_found' });
      expectError(await t.api('DELETE', keyPath(id)), 404, { code: 'not_found' });
      expectError(await t.api('POST', `${keyPath(id)}roll/`), 404, { code: 'not_found' });
    }
    expect((await t.api('GET', '/api/projects/', undefined, other.key)).status).toBe(200);
  });

  it('answers odd input with a 4xx in the error shape, never a 5xx', async () => {
    // (the reliability fuzzer skips these routes: they act on its own key)
    const user = await newUser(t, { scopes: MANAGE });
    const bodies = [
      null,
      [],
      'x',
      42,
      { label: null },
      { scopes: 'feature_flag:read' },
      { scopes: [1] },
      { label: 'x', scopes: ['*'], scoped_teams: ['1'] },
      { label: 'x', scopes: ['*'], scoped_teams: [-1] },
      { label: 'x', scopes: ['a'.repeat(1000)] },
    ];
    for (const [method, path] of [
      ['POST', KEYS],
      ['PATCH', keyPath('@current')],
      ['PATCH', keyPath('%00')],
      ['POST', `${keyPath('x'.repeat(500))}roll/`],
      ['PATCH', `/api/projects/${t.projectId}/reset_token/`],
    ] as const)
      for (const body of bodies) {
        const res = await t.api(method, path, body, user.key);
        expect(
          res.status,
          `${method} ${path} ${JSON.stringify(body)}: ${res.text}`,
        ).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expect(res.body).toMatchObject({ type: expect.any(String), code: expect.any(String) });
      }
  });

  it('allows ten keys a user, as PostHog', async () => {
    const user = await newUser(t, { scopes: ['*'] });
    for (let i = 1; i < 10; i++)
      expect((await t.api('POST', KEYS, { label: `k${i}`, scopes: ['*'] }, user.key)).status).toBe(
        201,
      );
    expectValidation(await t.api('POST', KEYS, { label: 'k10', scopes: ['*'] }, user.key), null);
    expect((await t.api('GET', KEYS, undefined, user.key)).body).toHaveLength(10);
  });
});
