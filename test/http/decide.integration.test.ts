import { gzipSync } from 'node:zlib';
import LZString from 'lz-string';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { accessReader } from '../../projections/access/accessReader.ts';
import { capture } from '../support/capture.ts';
import { decideRaw } from '../support/decide.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { adminUserId, flagPath, flagsPath, newUser } from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

async function project(): Promise<{ id: number; token: string }> {
  const made = await createProject(accessDeps(t.service.ctx), {
    name: `decide-${Math.random()}`,
    ownerUserId: await adminUserId(t),
  });
  return { id: made.projectId, token: made.projectApiKey };
}

async function flag(projectId: number, body: Record<string, unknown>): Promise<number> {
  const res = await t.api('POST', flagsPath(projectId), body);
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

const emailFlag = (key: string, domain: string) => ({
  key,
  name: key,
  filters: {
    groups: [
      {
        properties: [{ key: 'email', operator: 'icontains', value: domain, type: 'person' }],
        rollout_percentage: 100,
      },
    ],
  },
});

/** Polls until `check` passes (persons are projected asynchronously after capture). */
async function eventually<T>(get: () => Promise<T>, ok: (v: T) => boolean, ms = 5_000) {
  const until = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('answers by version', () => {
  let p: { id: number; token: string };
  beforeAll(async () => {
    p = await project();
    await flag(p.id, { key: 'on', name: 'on', filters: { groups: [{ rollout_percentage: 100 }] } });
    await flag(p.id, {
      key: 'off',
      name: 'off',
      filters: { groups: [{ rollout_percentage: 0 }] },
    });
    await flag(p.id, {
      key: 'inactive',
      name: 'inactive',
      active: false,
      filters: { groups: [{ rollout_percentage: 100 }] },
    });
    await flag(p.id, {
      key: 'variant',
      name: 'variant',
      filters: {
        groups: [{ rollout_percentage: 100, variant: 'blue' }],
        multivariate: {
          variants: [
            { key: 'blue', rollout_percentage: 50 },
            { key: 'red', rollout_percentage: 50 },
          ],
        },
        payloads: { blue: '{"color":"#00f"}' },
      },
    });
  });

  it('v3: every flag, false included; payload of the matched value as JSON text; client config', async () => {
    const res = await decideRaw(t.url, '/decide/?v=3', { api_key: p.token, distinct_id: 'u1' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      config: { enable_collect_everything: true },
      editorParams: {},
      isAuthenticated: false,
      supportedCompression: ['gzip', 'gzip-js', 'lz64'],
      featureFlags: { on: true, off: false, inactive: false, variant: 'blue' },
      featureFlagPayloads: { variant: '{"color":"#00f"}' },
      errorsWhileComputingFlags: false,
      errorComputingFlags: false,
      sessionRecording: false,
      siteApps: [],
    });
  });

  it('v1 lists active keys, v2 maps active flags, missing v is 1, a non-integer v is 2', async () => {
    const body = { token: p.token, distinct_id: 'u1' };
    const v1 = await decideRaw(t.url, '/decide/?v=1', body);
    expect(v1.body.featureFlags).toEqual(['on', 'variant']);
    expect((await decideRaw(t.url, '/decide', body)).body.featureFlags).toEqual(['on', 'variant']);
    const v2 = await decideRaw(t.url, '/decide/?v=2', body);
    expect(v2.body.featureFlags).toEqual({ on: true, variant: 'blue' });
    expect((await decideRaw(t.url, '/decide/?v=x', body)).body.featureFlags).toEqual({
      on: true,
      variant: 'blue',
    });
  });

  it('v4 and /flags: flags{} with reason and metadata; inactive is enabled:false', async () => {
    for (const path of ['/decide/?v=4', '/flags/?v=2', '/flags']) {
      const res = await decideRaw(t.url, path, { token: p.token, distinct_id: 'u1' });
      expect(res.status).toBe(200);
      expect(res.body.flags.variant).toMatchObject({
        key: 'variant',
        enabled: true,
        variant: 'blue',
        reason: { code: 'condition_match', condition_index: 0 },
        metadata: { version: 1, payload: '{"color":"#00f"}', description: 'variant' },
      });
      expect(res.body.flags.inactive).toMatchObject({ enabled: false, variant: null });
      expect(res.body.flags.off.reason.code).toBe('out_of_rollout_bound');
      expect(res.body.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.body.errorsWhileComputingFlags).toBe(false);
    }
    const withConfig = await decideRaw(t.url, '/flags/?v=2&config=true', {
      token: p.token,
      distinct_id: 'u1',
    });
    expect(withConfig.body.sessionRecording).toBe(false);
  });

  it('disable_flags → empty flags; flag_keys_to_evaluate restricts the answer', async () => {
    const off = await decideRaw(t.url, '/decide/?v=3', {
      token: p.token,
      distinct_id: 'u1',
      disable_flags: true,
    });
    expect(off.body.featureFlags).toEqual({});
    const one = await decideRaw(t.url, '/decide/?v=3', {
      token: p.token,
      distinct_id: 'u1',
      flag_keys_to_evaluate: ['on'],
    });
    expect(one.body.featureFlags).toEqual({ on: true });
  });

  it('a numeric distinct_id is taken as a string (same hash)', async () => {
    const n = await decideRaw(t.url, '/flags', { token: p.token, distinct_id: 12345 });
    const s = await decideRaw(t.url, '/flags', { token: p.token, distinct_id: '12345' });
    expect(n.status).toBe(200);
    expect(n.body.flags).toEqual(s.body.flags);
  });

  it('body encodings: form data= base64, gzip, lz64, and GET', async () => {
    const json = JSON.stringify({ token: p.token, distinct_id: 'u1' });
    const form = await decideRaw(t.url, '/decide/?v=3&compression=base64', undefined, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      raw: `data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`,
    });
    expect(form.body.featureFlags).toMatchObject({ on: true, variant: 'blue' });
    const gz = await decideRaw(t.url, '/flags/?v=2&compression=gzip-js', undefined, {
      headers: { 'content-type': 'text/plain' },
      raw: gzipSync(json),
    });
    expect(gz.body.flags.on.enabled).toBe(true);
    const lz = await decideRaw(t.url, '/decide/?v=3&compression=lz64', undefined, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      raw: `data=${encodeURIComponent(LZString.compressToBase64(json))}`,
    });
    expect(lz.body.featureFlags.on).toBe(true);
    const get = await decideRaw(t.url, `/decide/?v=3&token=${p.token}`, undefined, {
      method: 'GET',
    });
    expect(get.status).toBe(200);
    expect(get.body).toMatchObject({
      featureFlags: {},
      config: { enable_collect_everything: true },
    });
    const options = await decideRaw(t.url, '/decide/', undefined, { method: 'OPTIONS', raw: '' });
    expect(options.status).toBeLessThan(300);
  });
});

describe('errors', () => {
  it('401 invalid_api_key, 401 no_api_key, 400 missing_distinct_id, 400 malformed_data', async () => {
    const invalid = await decideRaw(t.url, '/decide/?v=3', { token: 'phc_nope', distinct_id: 'a' });
    expect(invalid.status).toBe(401);
    expect(invalid.body).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    const none = await decideRaw(t.url, '/flags', { distinct_id: 'a' });
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('no_api_key');
    // where the key comes from in this product, not PostHog's project settings
    expect(none.body.detail).toMatch(/first start of hogstream printed your project API key/);
    const noId = await decideRaw(t.url, '/decide/?v=3', { token: t.projectApiKey });
    expect(noId.status).toBe(400);
    expect(noId.body).toMatchObject({ code: 'missing_distinct_id', attr: 'distinct_id' });
    const bad = await decideRaw(t.url, '/decide/?v=3', undefined, { raw: '{not json' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('malformed_data');
    const badPersonal = await decideRaw(t.url, '/decide/?v=3', {
      token: 'phx_unknown_key_123',
      project_id: t.projectId,
      distinct_id: 'a',
    });
    expect(badPersonal.status).toBe(401);
    expect(badPersonal.body.code).toBe('invalid_personal_key');
  });

  it('a personal key with feature_flag:read and project_id is accepted', async () => {
    const { key } = await newUser(t, { scopes: ['feature_flag:read'] });
    const res = await decideRaw(t.url, '/decide/?v=3', {
      token: key,
      project_id: t.projectId,
      distinct_id: 'a',
    });
    expect(res.status, res.text).toBe(200);
  });

  it('a gzip bomb → 413 fast; a body over the limit → 413', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    const res = await decideRaw(t.url, '/decide/?v=3', undefined, {
      headers: { 'content-type': 'text/plain' },
      raw: bomb,
    });
    expect(res.status).toBe(413);
    expect(res.ms).toBeLessThan(2_000);
    const huge = await decideRaw(t.url, '/decide/?v=3', undefined, {
      raw: JSON.stringify({ token: 'x', distinct_id: 'a', pad: 'a'.repeat(2 * 1024 * 1024) }),
    });
    expect(huge.status).toBe(413);
    expect(huge.body.type).toBe('validation_error');
  });
});

describe('definitions and stored properties', () => {
  it('a PATCH changes /decide answers within a second', async () => {
    const p = await project();
    const id = await flag(p.id, {
      key: 'rollout',
      name: 'r',
      filters: { groups: [{ rollout_percentage: 0 }] },
    });
    const ask = () => decideRaw(t.url, '/decide/?v=3', { token: p.token, distinct_id: 'x' });
    expect((await ask()).body.featureFlags.rollout).toBe(false);
    const patched = await t.api('PATCH', flagPath(p.id, id), {
      filters: { groups: [{ rollout_percentage: 100 }] },
    });
    expect(patched.status).toBe(200);
    const started = Date.now();
    const res = await eventually(ask, (r) => r.body.featureFlags.rollout === true, 1_000);
    expect(res.body.featureFlags.rollout).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('stored person properties are used when the request omits them; request keys replace them', async () => {
    const p = await project();
    await flag(p.id, emailFlag('staff', '@example.com'));
    await capture({ url: t.url, projectApiKey: p.token }, [
      { event: 'signup', distinct_id: 'ann', properties: { $set: { email: 'ann@example.com' } } },
    ]);
    const ask = (body: Record<string, unknown> = {}) =>
      decideRaw(t.url, '/decide/?v=3', { token: p.token, distinct_id: 'ann', ...body });
    const stored = await eventually(ask, (r) => r.body.featureFlags.staff === true);
    expect(stored.body.featureFlags.staff).toBe(true);
    const replaced = await ask({ person_properties: { email: 'ann@elsewhere.org' } });
    expect(replaced.body.featureFlags.staff).toBe(false);
    const unknown = await decideRaw(t.url, '/decide/?v=3', { token: p.token, distinct_id: 'bob' });
    expect(unknown.body.featureFlags.staff).toBe(false);
  });

  it('concurrent answers from stored properties each get their own person, across projects', async () => {
    // Person loads of one event-loop turn share a query (flagPersonsLoader): many at once, in two
    // projects with the same distinct ids, must still each read their own person.
    const [a, b] = [await project(), await project()];
    await flag(a.id, emailFlag('staff', '@a.example'));
    await flag(b.id, emailFlag('staff', '@b.example'));
    const ids = Array.from({ length: 40 }, (_, i) => `user-${i}`);
    // in project a the even users are staff, in project b the odd ones; user-39 has no person in b
    for (const [p, domain, staff] of [
      [a, 'a.example', 0],
      [b, 'b.example', 1],
    ] as const)
      await capture(
        { url: t.url, projectApiKey: p.token },
        ids
          .filter((id) => !(p === b && id === 'user-39'))
          .map((id, i) => ({
            event: 'signup',
            distinct_id: id,
            properties: { $set: { email: `${id}@${i % 2 === staff ? domain : 'other.org'}` } },
          })),
      );
    const answer = async (p: { token: string }, id: string) =>
      (await decideRaw(t.url, '/decide/?v=3', { token: p.token, distinct_id: id })).body
        .featureFlags.staff;
    // both projects' persons projected (the last of each batch a staff member)
    await eventually(
      async () => [await answer(a, 'user-38'), await answer(b, 'user-37')],
      (got) => got.every((x) => x === true),
    );
    // interleaved, so one turn's loads mix the projects
    const asked = ids.flatMap((id) => [
      [a, id],
      [b, id],
    ]) as [{ token: string }, string][];
    const answers = await Promise.all(
      asked.map(async ([p, id]) => `${p === a ? 'a' : 'b'}:${id}:${await answer(p, id)}`),
    );
    const expected = asked.map(([p, id]) => {
      const i = Number(id.slice(5));
      return `${p === a ? 'a' : 'b'}:${id}:${p === a ? i % 2 === 0 : i % 2 === 1 && i !== 39}`;
    });
    expect(answers).toEqual(expected);
  });

  it('stored group properties come from $groupidentify', async () => {
    const p = await project();
    await capture({ url: t.url, projectApiKey: p.token }, [
      {
        event: '$groupidentify',
        distinct_id: 'ann',
        properties: {
          $group_type: 'company',
          $group_key: 'acme',
          $group_set: { plan: 'enterprise' },
        },
      },
    ]);
    await flag(p.id, {
      key: 'enterprise',
      name: 'enterprise',
      filters: {
        aggregation_group_type_index: 0,
        groups: [
          {
            properties: [
              {
                key: 'plan',
                operator: 'exact',
                value: ['enterprise'],
                type: 'group',
                group_type_index: 0,
              },
            ],
            rollout_percentage: 100,
          },
        ],
      },
    });
    const ask = () =>
      decideRaw(t.url, '/decide/?v=3', {
        token: p.token,
        distinct_id: 'ann',
        groups: { company: 'acme' },
      });
    const res = await eventually(ask, (r) => r.body.featureFlags.enterprise === true);
    expect(res.body.featureFlags.enterprise).toBe(true);
    const other = await decideRaw(t.url, '/decide/?v=3', {
      token: p.token,
      distinct_id: 'ann',
      groups: { company: 'globex' },
    });
    expect(other.body.featureFlags.enterprise).toBe(false);
  });

  it('GeoIP of X-Forwarded-For sets $geoip_* unless geoip_disable; request properties win', async () => {
    const p = await project();
    await flag(p.id, {
      key: 'us-only',
      name: 'us',
      filters: {
        groups: [
          {
            properties: [
              { key: '$geoip_country_code', operator: 'exact', value: ['US'], type: 'person' },
            ],
            rollout_percentage: 100,
          },
        ],
      },
    });
    const ask = (body: Record<string, unknown>) =>
      decideRaw(
        t.url,
        '/decide/?v=3',
        { token: p.token, distinct_id: 'geo', ...body },
        { headers: { 'x-forwarded-for': '8.8.8.8, 10.0.0.1' } },
      );
    expect((await ask({})).body.featureFlags['us-only']).toBe(true);
    expect((await ask({ geoip_disable: true })).body.featureFlags['us-only']).toBe(false);
    expect(
      (await ask({ person_properties: { $geoip_country_code: 'FR' } })).body.featureFlags[
        'us-only'
      ],
    ).toBe(false);
    const noHeader = await decideRaw(t.url, '/decide/?v=3', { token: p.token, distinct_id: 'geo' });
    expect(noHeader.body.featureFlags['us-only']).toBe(false);
  });
});

describe('experience continuity', () => {
  it('after $identify, the user id with $anon_distinct_id keeps the anonymous variant', async () => {
    const p = await project();
    await flag(p.id, {
      key: 'checkout',
      name: 'checkout',
      ensure_experience_continuity: true,
      filters: {
        groups: [{ rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'a', rollout_percentage: 34 },
            { key: 'b', rollout_percentage: 33 },
            { key: 'c', rollout_percentage: 33 },
          ],
        },
      },
    });
    const ask = (distinctId: string, anon?: string) =>
      decideRaw(t.url, '/decide/?v=3', {
        token: p.token,
        distinct_id: distinctId,
        ...(anon ? { $anon_distinct_id: anon } : {}),
      }).then((r) => r.body.featureFlags.checkout as string);
    const pairs: { anon: string; user: string; x: string }[] = [];
    for (let i = 0; pairs.length < 4 && i < 40; i++) {
      const anon = `anon-${i}`;
      const user = `user-${i}`;
      const x = await ask(anon);
      if (x !== (await ask(user))) pairs.push({ anon, user, x });
    }
    expect(pairs.length).toBe(4);
    for (const { anon, user } of pairs)
      await capture({ url: t.url, projectApiKey: p.token }, [
        { event: '$identify', distinct_id: user, properties: { $anon_distinct_id: anon } },
      ]);
    for (const { anon, user, x } of pairs) {
      expect(await ask(user, anon)).toBe(x);
      // Stored for the user id too: later calls without the anonymous id agree.
      expect(await ask(user)).toBe(x);
    }
    // Nothing new to record: repeating the call does not grow the log.
    const head = await t.service.stores.store.headPosition();
    for (const { anon, user } of pairs) await ask(user, anon);
    expect(await t.service.stores.store.headPosition()).toBe(head);
  });
});

describe('flag actions', () => {
  it('evaluation_reasons: value and reason of every flag; my_flags: the caller’s flags', async () => {
    const p = await project();
    await flag(p.id, emailFlag('staff', '@example.com'));
    await flag(p.id, { key: 'half', name: 'h', filters: { groups: [{ rollout_percentage: 0 }] } });
    const reasons = await t.api(
      'GET',
      `${flagsPath(p.id)}evaluation_reasons/?distinct_id=nobody&groups=${encodeURIComponent('{"company":"acme"}')}`,
    );
    expect(reasons.status, reasons.text).toBe(200);
    expect(reasons.body).toEqual({
      staff: { value: false, evaluation: { reason: 'no_condition_match', condition_index: 0 } },
      half: { value: false, evaluation: { reason: 'out_of_rollout_bound', condition_index: 0 } },
    });
    const bad = await t.api('GET', `${flagsPath(p.id)}evaluation_reasons/?distinct_id=x&groups=[`);
    expect(bad.status).toBe(400);
    const missing = await t.api('GET', `${flagsPath(p.id)}evaluation_reasons/`);
    expect(missing.status).toBe(400);

    const { userId, key } = await newUser(t, { projectId: p.id, scopes: ['feature_flag:read'] });
    const [user] = (await accessReader(t.service.stores.pool).usersById([userId])).values();
    await capture({ url: t.url, projectApiKey: p.token }, [
      {
        event: '$set',
        distinct_id: user!.distinct_id,
        properties: { $set: { email: 'me@example.com' } },
      },
    ]);
    const mine = await eventually(
      () => t.api('GET', `${flagsPath(p.id)}my_flags/`, undefined, key),
      (r) => r.body?.find?.((f: any) => f.feature_flag.key === 'staff')?.value === true,
    );
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.map((f: any) => [f.feature_flag.key, f.value]).sort()).toEqual([
      ['half', false],
      ['staff', true],
    ]);
  });
});

describe('definitions cache bounded to one project (FLAG_CACHE_MAX_PROJECTS=1)', () => {
  let small: TestService;
  beforeAll(async () => {
    small = await startTestService({ FLAG_CACHE_MAX_PROJECTS: '1' });
  });
  afterAll(async () => small?.close());

  it('projects evicted and reloaded in turn still answer their own flags, patches included', async () => {
    const owner = await adminUserId(small);
    const projects = await Promise.all(
      [0, 1].map(async (i) => {
        const made = await createProject(accessDeps(small.service.ctx), {
          name: `lru-${i}-${Math.random()}`,
          ownerUserId: owner,
        });
        const res = await small.api('POST', flagsPath(made.projectId), {
          key: 'f',
          name: 'f',
          filters: { groups: [{ rollout_percentage: i === 0 ? 0 : 100 }] },
        });
        expect(res.status).toBe(201);
        return { id: made.projectId, token: made.projectApiKey, flagId: res.body.id as number };
      }),
    );
    const ask = (p: { token: string }) =>
      decideRaw(small.url, '/decide/?v=3', { token: p.token, distinct_id: 'x' }).then(
        (r) => r.body.featureFlags.f,
      );
    for (let round = 0; round < 3; round++) {
      expect(await ask(projects[0]!)).toBe(false);
      expect(await ask(projects[1]!)).toBe(true);
    }
    // Patched while evicted: the reload reads the new definition.
    const patched = await small.api('PATCH', flagPath(projects[0]!.id, projects[0]!.flagId), {
      filters: { groups: [{ rollout_percentage: 100 }] },
    });
    expect(patched.status).toBe(200);
    expect(await ask(projects[0]!)).toBe(true);
  });
});
