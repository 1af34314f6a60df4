import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { adminUserId, createFlag, flagPath, newUser } from './helpers.ts';

/**
 * A flag's remote config payload, as posthog-python's `get_remote_config_payload` asks it:
 * `GET /api/projects/@current/feature_flags/<key>/remote_config?token=<project key>` with a
 * personal API key; the answer is the stored `true` payload (JSON text) or null.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

let seq = 0;
async function project(): Promise<{ id: number; token: string }> {
  const token = `phc_remotecfg_${process.pid}_${++seq}_${Date.now().toString(36)}`;
  const { projectId } = await createProject(accessDeps(t.service.ctx), {
    name: `remote-config-${seq}`,
    ownerUserId: await adminUserId(t),
    projectApiKey: token,
  });
  return { id: projectId, token };
}

async function get(path: string, key: string | null = t.personalApiKey) {
  const res = await fetch(`${t.url}${path}`, {
    headers: key ? { authorization: `Bearer ${key}` } : {},
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const ON = { groups: [{ properties: [], rollout_percentage: 100 }] };

describe('remote config payload', () => {
  it("answers the flag's `true` payload by key and by id, in the token's project", async () => {
    const p = await project();
    const flag = await createFlag(
      t,
      {
        key: 'checkout-config',
        filters: { ...ON, payloads: { true: { steps: 3, theme: 'dark' } } },
      },
      { projectId: p.id },
    );
    const byKey = await get(
      `/api/projects/@current/feature_flags/checkout-config/remote_config?token=${p.token}`,
    );
    expect(byKey).toEqual({ status: 200, body: '{"steps": 3, "theme": "dark"}' });
    const byId = await get(`/api/projects/${p.id}/feature_flags/${flag.id}/remote_config/`);
    expect(byId).toEqual(byKey);
  });

  it('answers null for a flag without a `true` payload', async () => {
    const p = await project();
    await createFlag(t, { key: 'plain', filters: ON }, { projectId: p.id });
    const res = await get(
      `/api/projects/@current/feature_flags/plain/remote_config?token=${p.token}`,
    );
    expect(res).toEqual({ status: 200, body: null });
  });

  it('is 404 for an unknown or deleted flag, 401 for a bad token or no key, 403 without feature_flag:read', async () => {
    const p = await project();
    const flag = await createFlag(t, { key: 'gone', filters: ON }, { projectId: p.id });
    const del = await t.api('PATCH', flagPath(p.id, flag.id), { deleted: true });
    expect(del.status, del.text).toBe(200);
    const base = `/api/projects/@current/feature_flags`;
    expect((await get(`${base}/gone/remote_config?token=${p.token}`)).status).toBe(404);
    expect((await get(`${base}/never-made/remote_config?token=${p.token}`)).status).toBe(404);
    const badToken = await get(`${base}/gone/remote_config?token=phc_nobody_has_this`);
    expect(badToken.status).toBe(401);
    expect(badToken.body.code).toBe('invalid_api_key');
    expect((await get(`${base}/gone/remote_config?token=${p.token}`, null)).status).toBe(401);
    const noScope = await newUser(t, { projectId: p.id, scopes: ['event:read'] });
    const refused = await get(`${base}/gone/remote_config?token=${p.token}`, noScope.key);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('feature_flag:read');
  });
});
