import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/testService.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

describe('service', () => {
  it('answers health and readiness', async () => {
    expect((await t.api('GET', '/_health')).body).toEqual({ status: 'ok' });
    expect((await t.api('GET', '/_readyz')).body).toEqual({ status: 'ready' });
  });
  it('creates a flag and reads it back', async () => {
    const created = await t.api('POST', `/api/projects/${t.projectId}/feature_flags/`, {
      key: 'smoke',
      name: 'Smoke',
    });
    expect(created.status).toBe(201);
    const got = await t.api(
      'GET',
      `/api/projects/${t.projectId}/feature_flags/${created.body.id}/`,
    );
    expect(got.body.key).toBe('smoke');
  });
});
