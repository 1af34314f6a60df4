import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { resetProjectApiKey } from '../../commands/access/resetProjectApiKey.ts';
import { sendRaw } from '../support/captureClient.ts';
import { decideRaw } from '../support/decide.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { ADMIN, adminUserId, expectError, MEMBER, newUser } from './helpers.ts';

// PATCH /api/projects/:id/reset_token/ (PostHog's TeamViewSet/ProjectViewSet action): the old
// project key stops capture, /decide and local evaluation at once, the new one works.
let t: TestService;
beforeAll(async () => {
  t = await startTestService({}, { clickhouse: false });
});
afterAll(async () => t?.close());

let seq = 0;
async function project(): Promise<{ id: number; key: string; name: string }> {
  const name = `reset-${process.pid}-${++seq}`;
  const { projectId, projectApiKey } = await createProject(accessDeps(t.service.ctx), {
    name,
    ownerUserId: await adminUserId(t),
  });
  return { id: projectId, key: projectApiKey, name };
}

const captureWith = (key: string) =>
  sendRaw(t.url, {
    path: '/batch/',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: key, batch: [{ event: 'e', distinct_id: 'd1' }] }),
  });
const decideWith = (key: string) =>
  decideRaw(t.url, '/flags/?v=2', { token: key, distinct_id: 'd1' });
const localEvaluationWith = (key: string) =>
  t.api('GET', `/api/feature_flag/local_evaluation?token=${key}`);
const resetPath = (projectId: number) => `/api/projects/${projectId}/reset_token/`;

/** What PostHog answers an unknown project key, on capture and on /decide alike. */
function expectUnknownKey(res: { status: number; text: string }) {
  expect(res.status, res.text).toBe(401);
  expect(JSON.parse(res.text)).toMatchObject({
    type: 'authentication_error',
    code: 'invalid_api_key',
    detail: expect.stringContaining('Project API key invalid'),
  });
}

async function expectWorks(key: string) {
  expect((await captureWith(key)).status).toBe(200);
  expect((await decideWith(key)).status).toBe(200);
  expect((await localEvaluationWith(key)).status).toBe(200);
}

describe('project API key reset', () => {
  it('answers the project with its new key once; the old key is refused at once everywhere', async () => {
    const p = await project();
    // Used first, so every cache in the way (capture's, /decide's) holds the old key.
    await expectWorks(p.key);
    const res = await t.api('PATCH', resetPath(p.id));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      id: p.id,
      name: p.name,
      access_level: 15,
      api_token: expect.stringMatching(/^phc_[A-Za-z0-9_-]{32}$/),
    });
    expectUnknownKey(await captureWith(p.key));
    expectUnknownKey(await decideWith(p.key));
    expectError(await localEvaluationWith(p.key), 401, { code: 'invalid_api_key' });
    await expectWorks(res.body.api_token);
    // Resetting again retires the second key too.
    const again = await t.api('PATCH', resetPath(p.id));
    expectUnknownKey(await captureWith(res.body.api_token));
    await expectWorks(again.body.api_token);
  });

  it('takes effect on a server whose own route did not do it (the CLI, another server)', async () => {
    const p = await project();
    await expectWorks(p.key);
    // Appended as the CLI does: this process's caches learn of it only from the log.
    const { projectApiKey } = await resetProjectApiKey(
      { ...accessDeps(t.service.ctx), forgetCachedProjectKeys: () => {} },
      p.id,
      null,
      { occurredAt: new Date().toISOString(), projectId: p.id },
    );
    const deadline = Date.now() + 5_000;
    let res = await captureWith(p.key);
    while (res.status === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      res = await captureWith(p.key);
    }
    expectUnknownKey(res);
    expectUnknownKey(await decideWith(p.key));
    await expectWorks(projectApiKey);
  });

  it('needs project:write and an admin or owner of the project', async () => {
    const p = await project();
    const member = await newUser(t, { projectId: p.id, level: MEMBER, scopes: ['project:write'] });
    const admin = await newUser(t, { projectId: p.id, level: ADMIN, scopes: ['project:write'] });
    const noScope = await newUser(t, {
      projectId: p.id,
      level: ADMIN,
      scopes: ['feature_flag:write'],
    });
    expectError(await t.api('PATCH', resetPath(p.id), undefined, member.key), 403, {
      code: 'permission_denied',
    });
    expectError(await t.api('PATCH', resetPath(p.id), undefined, noScope.key), 403, {
      code: 'permission_denied',
    });
    await expectWorks(p.key);
    expectError(await t.api('PATCH', resetPath(999_999)), 404);
    const ok = await t.api('PATCH', resetPath(p.id), undefined, admin.key);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.access_level).toBe(ADMIN);
  });
});
