import { afterAll, beforeAll, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';
let t: TestService;
beforeAll(async () => { t = await startTestService(); });
afterAll(async () => t?.close());
it('probe', async () => {
  const p = t.projectId;
  const show = async (m: string, path: string, body?: unknown, key?: string | null) => {
    const r = await t.api(m, path, body, key);
    console.log(m, path, r.status, r.text.slice(0, 200));
  };
  await show('GET', `/api/projects/${p}/feature_flags/3000000000/`);
  await show('PATCH', `/api/projects/${p}/feature_flags/3000000000/`, { name: 'x' });
  await show('GET', `/api/projects/${p}/feature_flags/3000000000/activity/`);
  await show('GET', `/api/projects/${p}/feature_flags/1/role_access/3000000000/`);
  await show('GET', `/api/projects/${p}/feature_flags/3000000000/role_access/`);
  await show('POST', `/api/projects/${p}/feature_flags/3000000000/role_access/`, { role_id: '00000000-0000-4000-8000-000000000000' });
  await show('GET', `/%61pi/projects/${p}/feature_flags/`, undefined, null);
  await show('GET', `/api/projects/${p}/feature%5Fflags/`, undefined, null);
  await show('GET', `/api/projects/${p}/feature_flags/?limit=1&limit=2`);
  await show('GET', `/api/projects/${p}/feature_flags/1.5/`);
  await show('GET', `/api/projects/${p}/feature_flags/1e3/`);
  await show('GET', `/api/projects/${p}/feature_flags/%20/`);
  await show('GET', `/api/projects/${p}/feature_flags/0x10/`);
  await show('PATCH', `/api/projects/${p}/feature_flags/1/`, undefined);
  await show('GET', `/api/projects/${p}/feature_flags/activity/?limit=0`);
  await show('GET', `/api/projects/${p}/feature_flags/?limit=5000`);
});
