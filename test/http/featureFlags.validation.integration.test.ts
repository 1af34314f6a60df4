import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';
import { createFlag, expectValidation, flagPath, flagsPath, newProject } from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

/** Sends a raw body (not JSON.stringify'd) with the admin key. */
async function raw(
  method: string,
  path: string,
  body: string | undefined,
  contentType = 'application/json',
) {
  const headers: Record<string, string> = { authorization: `Bearer ${t.personalApiKey}` };
  if (contentType) headers['content-type'] = contentType;
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

async function flagCount(projectId: number): Promise<number> {
  return (await t.api('GET', flagsPath(projectId))).body.count;
}

describe('key', () => {
  it('is required on create', async () => {
    const project = await newProject(t);
    const res = await t.api('POST', flagsPath(project), { name: 'no key' });
    expectValidation(res, 'key', 'required');
    expect(await flagCount(project)).toBe(0);
  });

  it.each([
    ['blank', ''],
    ['blank after trimming', '   '],
    ['with a space', 'has space'],
    ['with a dot', 'dotted.key'],
    ['with a slash', 'a/b'],
    ['non-ASCII', 'clé'],
    ['too long', 'k'.repeat(401)],
  ])('rejects a key %s', async (_name, key) => {
    const project = await newProject(t);
    expectValidation(await t.api('POST', flagsPath(project), { key }), 'key');
    expect(await flagCount(project)).toBe(0);
  });

  it('rejects a key that is not a string', async () => {
    expectValidation(await t.api('POST', flagsPath(t.projectId), { key: ['a'] }), 'key');
    expectValidation(await t.api('POST', flagsPath(t.projectId), { key: null }), 'key');
  });

  it('accepts letters, digits, hyphens and underscores up to 400 characters', async () => {
    const a = await t.api('POST', flagsPath(t.projectId), { key: 'Ab-9_z' });
    expect(a.status, a.text).toBe(201);
    const long = await t.api('POST', flagsPath(t.projectId), { key: 'k'.repeat(400) });
    expect(long.status, long.text).toBe(201);
  });

  it('rejects a bad key format on PATCH and leaves the flag unchanged', async () => {
    const flag = await createFlag(t, { key: 'patch-format' });
    expectValidation(
      await t.api('PATCH', flagPath(t.projectId, flag.id), { key: 'bad key!' }),
      'key',
      'invalid_key',
    );
    expect((await t.api('GET', flagPath(t.projectId, flag.id))).body.key).toBe('patch-format');
  });

  it('is unique per project among live flags (create and rename)', async () => {
    const project = await newProject(t);
    await createFlag(t, { key: 'taken' }, { projectId: project });
    const dup = await t.api('POST', flagsPath(project), { key: 'taken' });
    expectValidation(dup, 'key', 'unique');
    expect(await flagCount(project)).toBe(1);

    const other = await createFlag(t, { key: 'other' }, { projectId: project });
    expectValidation(
      await t.api('PATCH', flagPath(project, other.id), { key: 'taken' }),
      'key',
      'unique',
    );
    expect((await t.api('GET', flagPath(project, other.id))).body.key).toBe('other');
    // PATCHing a flag with its own key is not a conflict
    const same = await t.api('PATCH', flagPath(project, other.id), {
      key: 'other',
      name: 'renamed',
    });
    expect(same.status, same.text).toBe(200);
    expect(same.body.name).toBe('renamed');
  });

  it("lets a soft-deleted flag's key be reused, and then refuses to restore the old flag (400 attr key)", async () => {
    const project = await newProject(t);
    const old = await createFlag(t, { key: 'recycled' }, { projectId: project });
    expect((await t.api('PATCH', flagPath(project, old.id), { deleted: true })).status).toBe(200);

    const reuse = await t.api('POST', flagsPath(project), { key: 'recycled' });
    expect(reuse.status, reuse.text).toBe(201);

    const restore = await t.api('PATCH', flagPath(project, old.id), { deleted: false });
    expectValidation(restore, 'key', 'unique');
    const got = await t.api('GET', flagPath(project, old.id));
    expect(got.body.deleted).toBe(true);
    expect((await t.api('GET', flagsPath(project))).body.results.map((f: any) => f.id)).toEqual([
      reuse.body.id,
    ]);

    // restoring together with a free key works
    const restored = await t.api('PATCH', flagPath(project, old.id), {
      deleted: false,
      key: 'recycled-v1',
    });
    expect(restored.status, restored.text).toBe(200);
    expect(restored.body).toMatchObject({ deleted: false, key: 'recycled-v1' });
    expect(await flagCount(project)).toBe(2);
  });

  it('lets a soft-deleted flag take a key that a live flag uses, while it stays deleted', async () => {
    const project = await newProject(t);
    await createFlag(t, { key: 'live-one' }, { projectId: project });
    const ghost = await createFlag(t, { key: 'ghost' }, { projectId: project });
    await t.api('PATCH', flagPath(project, ghost.id), { deleted: true });
    const res = await t.api('PATCH', flagPath(project, ghost.id), { key: 'live-one' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ key: 'live-one', deleted: true });
  });
});

describe('key uniqueness under concurrency', () => {
  it('lets exactly one of several simultaneous creates with the same key succeed', async () => {
    const project = await newProject(t);
    const results = await Promise.all(
      Array.from({ length: 6 }, () => t.api('POST', flagsPath(project), { key: 'race' })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 400, 400, 400, 400, 400]);
    for (const r of results.filter((x) => x.status === 400)) expectValidation(r, 'key', 'unique');
    const list = await t.api('GET', flagsPath(project));
    expect(list.body.count).toBe(1);
    expect(list.body.results[0].key).toBe('race');
  });

  it('serves many simultaneous creates with distinct keys (no lock starvation)', async () => {
    const project = await newProject(t);
    const keys = Array.from({ length: 16 }, (_, i) => `burst-${i}`);
    const results = await Promise.all(
      keys.map((key) => t.api('POST', flagsPath(project), { key })),
    );
    expect(results.map((r) => r.status)).toEqual(keys.map(() => 201));
    expect(await flagCount(project)).toBe(16);
  }, 20_000);

  it('lets only one of two simultaneous renames to the same key succeed', async () => {
    const project = await newProject(t);
    const a = await createFlag(t, { key: 'rename-a' }, { projectId: project });
    const b = await createFlag(t, { key: 'rename-b' }, { projectId: project });
    const results = await Promise.all([
      t.api('PATCH', flagPath(project, a.id), { key: 'wanted' }),
      t.api('PATCH', flagPath(project, b.id), { key: 'wanted' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    const keys = (await t.api('GET', flagsPath(project))).body.results
      .map((f: any) => f.key)
      .sort();
    expect(keys.filter((k: string) => k === 'wanted')).toHaveLength(1);
  });

  it('does not let a restore and a create of the same key both succeed', async () => {
    const project = await newProject(t);
    const old = await createFlag(t, { key: 'contested' }, { projectId: project });
    await t.api('PATCH', flagPath(project, old.id), { deleted: true });
    const [restore, create] = await Promise.all([
      t.api('PATCH', flagPath(project, old.id), { deleted: false }),
      t.api('POST', flagsPath(project), { key: 'contested' }),
    ]);
    const won = [restore, create].filter((r) => r.status === 200 || r.status === 201);
    const lost = [restore, create].filter((r) => r.status >= 400);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expectValidation(lost[0]!, 'key', 'unique');
    const live = (await t.api('GET', flagsPath(project))).body.results.filter(
      (f: any) => f.key === 'contested',
    );
    expect(live).toHaveLength(1);
  });
});

describe('ids out of range', () => {
  it('answers 404, never 5xx, for flag and role access ids beyond the integer range', async () => {
    const flag = await createFlag(t);
    const huge = 3_000_000_000;
    const base = `/api/projects/${t.projectId}/feature_flags`;
    const checks: Array<[string, string, unknown?]> = [
      ['GET', `${base}/${huge}/`],
      ['PATCH', `${base}/${huge}/`, { name: 'x' }],
      ['GET', `${base}/${huge}/activity/`],
      ['GET', `${base}/${huge}/role_access/`],
      ['GET', `${base}/${flag.id}/role_access/${huge}/`],
      ['DELETE', `${base}/${flag.id}/role_access/${huge}/`],
    ];
    for (const [method, path, body] of checks) {
      const res = await t.api(method, path, body);
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found', detail: expect.any(String) });
    }
  });
});

describe('filters', () => {
  const person = (key: string, value: unknown) => ({
    key,
    type: 'person',
    value,
    operator: 'exact',
  });

  it.each([
    [
      'rollout above 100',
      { groups: [{ properties: [], rollout_percentage: 101 }] },
      /between 0 and 100/,
    ],
    [
      'negative rollout',
      { groups: [{ properties: [], rollout_percentage: -1 }] },
      /between 0 and 100/,
    ],
    [
      'rollout not a number',
      { groups: [{ properties: [], rollout_percentage: 'half' }] },
      /rollout_percentage/,
    ],
    [
      'variants summing to 90',
      {
        groups: [{ rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'a', rollout_percentage: 45 },
            { key: 'b', rollout_percentage: 45 },
          ],
        },
      },
      /sum to 100/,
    ],
    [
      'duplicate variant keys',
      {
        groups: [{ rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'a', rollout_percentage: 50 },
            { key: 'a', rollout_percentage: 50 },
          ],
        },
      },
      /unique/,
    ],
    [
      'payload key other than "true" on a boolean flag',
      { groups: [{ rollout_percentage: 100 }], payloads: { false: '{}' } },
      /Payload keys/,
    ],
    [
      'payload key that is not a variant',
      {
        groups: [{ rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'a', rollout_percentage: 50 },
            { key: 'b', rollout_percentage: 50 },
          ],
        },
        payloads: { c: '1' },
      },
      /Payload keys must match a variant/,
    ],
    [
      'payload that is not JSON text',
      { groups: [{ rollout_percentage: 100 }], payloads: { true: '{not json' } },
      /not valid JSON/,
    ],
    ['groups not a list', { groups: 'everyone' }, /groups must be a list/],
    [
      'event property on a person flag',
      {
        groups: [
          { properties: [{ key: '$browser', type: 'event', value: 'x', operator: 'exact' }] },
        ],
      },
      /person/,
    ],
    [
      'unknown operator',
      { groups: [{ properties: [{ key: 'a', type: 'person', value: 'x', operator: 'bogus' }] }] },
      /Invalid operator/,
    ],
    [
      'variant override that does not exist',
      {
        groups: [{ rollout_percentage: 100, variant: 'zzz' }],
        multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] },
      },
      /variant override/,
    ],
  ])('rejects %s on create with 400 attr filters', async (_name, filters, detail) => {
    const project = await newProject(t);
    const res = await t.api('POST', flagsPath(project), { key: 'filtered', filters });
    expectValidation(res, 'filters');
    expect(res.body.detail).toMatch(detail);
    expect(await flagCount(project)).toBe(0);
  });

  it('rejects bad filters on PATCH and keeps the stored ones', async () => {
    const flag = await createFlag(t, {
      filters: { groups: [{ properties: [], rollout_percentage: 40 }] },
    });
    const res = await t.api('PATCH', flagPath(t.projectId, flag.id), {
      filters: { groups: [{ properties: [], rollout_percentage: 250 }] },
    });
    expectValidation(res, 'filters');
    const got = await t.api('GET', flagPath(t.projectId, flag.id));
    expect(got.body.rollout_percentage).toBe(40);
    expect(got.body.filters).toEqual(flag.filters);
  });

  it('rejects filters that are not an object', async () => {
    expectValidation(
      await t.api('POST', flagsPath(t.projectId), { key: 'f-list', filters: [1, 2] }),
      'filters',
    );
    expectValidation(
      await t.api('POST', flagsPath(t.projectId), { key: 'f-null', filters: null }),
      'filters',
    );
  });

  it('accepts valid multivariate filters with payloads, boundary rollouts and person properties', async () => {
    const filters = {
      groups: [
        { properties: [person('plan', 'pro')], rollout_percentage: 0 },
        { properties: [], rollout_percentage: 100 },
      ],
      multivariate: {
        variants: [
          { key: 'control', rollout_percentage: 33.3 },
          { key: 'test', rollout_percentage: 33.3 },
          { key: 'other', rollout_percentage: 33.4 },
        ],
      },
      payloads: { control: '{"color":"blue"}', test: { color: 'red' } },
    };
    const res = await t.api('POST', flagsPath(t.projectId), { key: 'mv-ok', filters });
    expect(res.status, res.text).toBe(201);
    expect(res.body.filters.multivariate.variants.map((v: any) => v.key)).toEqual([
      'control',
      'test',
      'other',
    ]);
    // non-string payloads are stored as JSON text
    expect(typeof res.body.filters.payloads.test).toBe('string');
    expect(JSON.parse(res.body.filters.payloads.test)).toEqual({ color: 'red' });
    expect(res.body.filters.payloads.control).toBe('{"color":"blue"}');
    const got = await t.api('GET', flagPath(t.projectId, res.body.id));
    expect(got.body.filters).toEqual(res.body.filters);
  });

  it('accepts a "true" payload on a boolean flag', async () => {
    const res = await t.api('POST', flagsPath(t.projectId), {
      key: 'bool-payload',
      filters: { groups: [{ rollout_percentage: 100 }], payloads: { true: '{"a":1}' } },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.filters.payloads).toEqual({ true: '{"a":1}' });
  });
});

describe('other fields', () => {
  it.each([
    ['name', { name: 5 }],
    ['active', { active: 'yes' }],
    ['deleted', { deleted: 'no' }],
    ['tags', { tags: 'beta' }],
    ['analytics_dashboards', { analytics_dashboards: ['x'] }],
    ['ensure_experience_continuity', { ensure_experience_continuity: 1 }],
    ['performed_rollback', { performed_rollback: 'true' }],
    ['has_enriched_analytics', { has_enriched_analytics: null }],
    ['created_at', { created_at: 'yesterday' }],
  ])('rejects a bad %s on create with 400 naming it', async (attr, extra) => {
    const project = await newProject(t);
    expectValidation(await t.api('POST', flagsPath(project), { key: 'typed', ...extra }), attr);
    expect(await flagCount(project)).toBe(0);
  });

  it.each([
    ['name', { name: ['x'] }],
    ['active', { active: 'no' }],
    ['deleted', { deleted: 'yes' }],
    ['tags', { tags: {} }],
  ])('rejects a bad %s on PATCH with 400 naming it and changes nothing', async (attr, body) => {
    const flag = await createFlag(t, { name: 'unchanged' });
    expectValidation(await t.api('PATCH', flagPath(t.projectId, flag.id), body), attr);
    const got = await t.api('GET', flagPath(t.projectId, flag.id));
    expect(got.body).toMatchObject({ name: 'unchanged', active: true, deleted: false, tags: [] });
  });

  it('rejects a non-integer flag id in the path with 400 or 404, never 5xx', async () => {
    const res = await t.api('GET', `${flagsPath(t.projectId)}abc/`);
    expect([400, 404]).toContain(res.status);
    expect(res.body).toMatchObject({
      type: expect.any(String),
      code: expect.any(String),
      detail: expect.any(String),
    });
  });
});

describe('malformed bodies', () => {
  it.each([
    ['truncated JSON', '{"key": "x"'],
    ['not JSON at all', 'key=x'],
    ['trailing comma', '{"key": "x",}'],
  ])('answers 400 in the error shape for %s on POST', async (_name, body) => {
    const project = await newProject(t);
    const res = await raw('POST', flagsPath(project), body);
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({
      type: 'validation_error',
      code: expect.any(String),
      detail: expect.any(String),
    });
    expect(res.body).toHaveProperty('attr');
    expect(await flagCount(project)).toBe(0);
  });

  it('answers 400 for malformed JSON on PATCH and leaves the flag alone', async () => {
    const flag = await createFlag(t, { name: 'intact' });
    const res = await raw('PATCH', flagPath(t.projectId, flag.id), '{"name": ');
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', detail: expect.any(String) });
    expect((await t.api('GET', flagPath(t.projectId, flag.id))).body.name).toBe('intact');
  });

  it('answers 400 for an empty JSON body, a JSON null and a JSON array', async () => {
    for (const body of ['', 'null', '[]', '"key"', '42']) {
      const res = await raw('POST', flagsPath(t.projectId), body);
      expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(400);
      expect(res.body).toMatchObject({
        type: 'validation_error',
        code: expect.any(String),
        detail: expect.any(String),
      });
    }
  });

  it('answers a 4xx in the error shape for a non-JSON content type', async () => {
    const res = await raw('POST', flagsPath(t.projectId), 'key=x', 'text/plain');
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body).toMatchObject({
      type: expect.any(String),
      code: expect.any(String),
      detail: expect.any(String),
    });
  });
});
