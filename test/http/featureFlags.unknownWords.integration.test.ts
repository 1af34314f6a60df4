import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';
import { createFlag, expectError, flagsPath } from './helpers.ts';

/**
 * Words under `feature_flags/` that are neither a route nor an integer id name nothing: 404 in
 * the error shape for every method, not a 400 about the id (PostHog answers them 404 too).
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

describe('feature_flags/<word>/', () => {
  it('404 not_found for a word in place of a flag or role access id, whatever the method', async () => {
    const flag = await createFlag(t);
    const base = flagsPath(t.projectId);
    const requests: [string, string, unknown?][] = [
      ['GET', `${base}nope/`],
      ['GET', `${base}nope`],
      ['GET', `${base}12abc/`],
      ['GET', `${base}1.5/`],
      ['PATCH', `${base}nope/`, { name: 'x' }],
      ['PATCH', `${base}nope/`, { filters: 'not filters' }],
      ['DELETE', `${base}nope/`],
      ['POST', `${base}nope/`, {}],
      ['GET', `${base}nope/activity/`],
      ['GET', `${base}nope/role_access/`],
      ['POST', `${base}nope/role_access/`, { role_id: 'x' }],
      ['GET', `${base}${flag.id}/role_access/nope/`],
      ['DELETE', `${base}${flag.id}/role_access/nope/`],
      ['GET', `${base}nope/whatever/deeper/`],
    ];
    for (const [method, path, body] of requests) {
      const res = await t.api(method, path, body);
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(404);
      expect(res.body).toEqual({
        type: 'invalid_request',
        code: 'not_found',
        detail: expect.any(String),
        attr: null,
      });
    }
  });

  it('still authenticates first, and named routes and integer ids still answer', async () => {
    const base = flagsPath(t.projectId);
    expectError(await t.api('GET', `${base}nope/`, undefined, null), 401);
    expect((await t.api('GET', `${base}activity/`)).status).toBe(200);
    expect((await t.api('GET', `${base}local_evaluation/`)).status).toBe(200);
    const flag = await createFlag(t);
    expect((await t.api('GET', `${base}${flag.id}/`)).status).toBe(200);
    expect((await t.api('GET', `${base}${flag.id}/activity/`)).status).toBe(200);
    expectError(await t.api('GET', `${base}999999/`), 404, { code: 'not_found' });
  });
});
