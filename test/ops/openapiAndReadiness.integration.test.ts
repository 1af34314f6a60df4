import { compileErrors, validate } from '@readme/openapi-parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

describe('OpenAPI document', () => {
  it('is generated from the routes’ zod schemas and served with a browsable UI', async () => {
    const doc = await t.api('GET', '/api/schema/', undefined, null);
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    const create = doc.body.paths['/api/projects/{project_id}/feature_flags/'].post;
    expect(Object.keys(create.responses)).toEqual(
      expect.arrayContaining(['201', '400', '401', '403', '404']),
    );
    const flag = doc.body.components.schemas.FeatureFlag;
    expect(flag.required).toEqual(
      expect.arrayContaining(['id', 'key', 'filters', 'is_simple_flag', 'can_edit']),
    );
    const ui = await fetch(`${t.url}/api/schema/swagger-ui/`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/swagger/i);
  });
});

describe('OpenAPI document validity (issue #12)', () => {
  it('is a valid OpenAPI 3.1 document for a maintained validator', async () => {
    const doc = await t.api('GET', '/api/schema/', undefined, null);
    expect(doc.body.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(doc.body);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('resolves every $ref and names every operation once, as PostHog does (issue #25)', async () => {
    const doc = (await t.api('GET', '/api/schema/', undefined, null)).body;
    // @readme/openapi-parser resolves every $ref and checks operationIds are unique.
    const result = await validate(structuredClone(doc));
    expect(result.valid ? '' : compileErrors(result)).toBe('');
    const text = JSON.stringify(doc);
    const refs = new Set([...text.matchAll(/"\$ref":"([^"]*)"/g)].map((m) => m[1]));
    const dangling = [...refs].filter(
      (ref) => !doc.components.schemas[ref?.replace('#/components/schemas/', '') ?? ''],
    );
    expect(dangling).toEqual([]);
    expect(text).not.toContain('__shared');
    // The recursive cohort filter is a component of its own, referring to itself.
    const group = doc.components.schemas.CohortPropertyGroupInput;
    expect(JSON.stringify(group)).toContain('"#/components/schemas/CohortPropertyGroupInput"');
    expect(
      doc.components.schemas.CohortCreateInput.properties.filters.properties.properties,
    ).toEqual({ $ref: '#/components/schemas/CohortPropertyGroupInput' });

    const ids: Record<string, string> = {};
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>))
      for (const [method, op] of Object.entries(methods)) ids[`${method} ${path}`] = op.operationId;
    expect(Object.keys(ids).length).toBeGreaterThan(80);
    expect(Object.entries(ids).filter(([, id]) => !id)).toEqual([]);
    expect(new Set(Object.values(ids)).size).toBe(Object.keys(ids).length);
    const p = '/api/projects/{project_id}';
    expect(ids).toMatchObject({
      [`get ${p}/feature_flags/`]: 'feature_flags_list',
      [`post ${p}/feature_flags/`]: 'feature_flags_create',
      [`get ${p}/feature_flags/{id}/`]: 'feature_flags_retrieve',
      [`patch ${p}/feature_flags/{id}/`]: 'feature_flags_partial_update',
      [`delete ${p}/feature_flags/{id}/`]: 'feature_flags_destroy',
      [`get ${p}/feature_flags/activity/`]: 'feature_flags_activity_retrieve',
      [`get ${p}/feature_flags/{id}/activity/`]: 'feature_flags_activity_retrieve_2',
      [`get ${p}/feature_flags/{feature_flag_id}/role_access/`]: 'feature_flags_role_access_list',
      [`get ${p}/persons/{id}/`]: 'persons_retrieve',
      [`post ${p}/persons/{id}/split/`]: 'persons_split_create',
      [`get ${p}/cohorts/`]: 'cohorts_list',
      'post /decide/': 'decide_create',
      'post /batch/': 'batch_create',
      'get /_readyz': 'readyz_retrieve',
    });
    expect(doc.servers).toEqual([{ url: '/', description: 'this server' }]);
  });

  it('asks no personal key of the public routes, and one of the /api routes', async () => {
    const { paths } = (await t.api('GET', '/api/schema/', undefined, null)).body;
    for (const [path, method] of [
      ['/batch/', 'post'],
      ['/e/', 'post'],
      ['/decide/', 'post'],
      ['/flags/', 'post'],
      ['/_health', 'get'],
      ['/_readyz', 'get'],
    ] as const)
      expect(paths[path]?.[method]?.security, `${method} ${path}`).toEqual([]);
    expect(paths['/api/projects/{project_id}/feature_flags/'].get.security).toBeUndefined();
  });

  it('describes every parameter', async () => {
    const { paths } = (await t.api('GET', '/api/schema/', undefined, null)).body;
    const bare: string[] = [];
    for (const [path, methods] of Object.entries(paths as Record<string, Record<string, any>>))
      for (const [method, op] of Object.entries(methods))
        for (const p of op.parameters ?? [])
          if (!p.description && !p.schema?.description)
            bare.push(`${method} ${path} ${p.in}:${p.name}`);
    expect(bare).toEqual([]);
  });

  it('lists every content type capture and /decide take, and the CSV answers', async () => {
    const { paths } = (await t.api('GET', '/api/schema/', undefined, null)).body;
    const types = (path: string) => Object.keys(paths[path].post.requestBody.content).sort();
    for (const path of ['/batch/', '/e/', '/capture/', '/i/v0/e/'])
      expect(types(path), path).toEqual([
        'application/json',
        'application/octet-stream',
        'application/x-www-form-urlencoded',
        'multipart/form-data',
        'text/plain',
      ]);
    for (const path of ['/decide/', '/flags/'])
      expect(types(path), path).toEqual([
        'application/json',
        'application/octet-stream',
        'application/x-www-form-urlencoded',
        'text/plain',
      ]);
    for (const path of [
      '/api/projects/{project_id}/persons/',
      '/api/projects/{project_id}/events/',
      '/api/projects/{project_id}/persons/trends/',
    ]) {
      const ok = paths[path].get.responses['200'].content;
      expect(Object.keys(ok).sort(), path).toEqual(['application/json', 'text/csv']);
      expect(ok['text/csv'].schema.type).toBe('string');
    }
  });
});

describe('health and readiness', () => {
  it('/_readyz answers 503 naming a projector that is not running, and 200 again once it runs', async () => {
    expect((await t.api('GET', '/_readyz', undefined, null)).status).toBe(200);
    const runner = t.service.runners.get('feature_flags')!;
    await runner.stop();
    const down = await t.api('GET', '/_readyz', undefined, null);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'not_ready', failing: ['projection feature_flags'] });
    expect((await t.api('GET', '/_health', undefined, null)).status).toBe(200);
    await runner.start();
    expect((await t.api('GET', '/_readyz', undefined, null)).status).toBe(200);
  });

  it('unknown routes answer 404 in the error shape', async () => {
    const res = await t.api('GET', '/nope', undefined, null);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      type: 'invalid_request',
      code: 'not_found',
      detail: 'Not found.',
      attr: null,
    });
  });
});

describe('X-Request-Id', () => {
  it('answers with the caller’s request id, or one of its own (a uuid), bounded in length', async () => {
    const given = await fetch(`${t.url}/_health`, { headers: { 'x-request-id': 'trace-123' } });
    expect(given.headers.get('x-request-id')).toBe('trace-123');
    const own = await fetch(`${t.url}/_health`);
    expect(own.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const long = await fetch(`${t.url}/_health`, { headers: { 'x-request-id': 'x'.repeat(5000) } });
    expect(long.headers.get('x-request-id')).toBe('x'.repeat(200));
  });
});
