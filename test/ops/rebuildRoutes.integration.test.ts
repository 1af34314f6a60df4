import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser } from '../http/helpers.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Issue #30: a rebuild started over HTTP (the console's Operations page) runs in the server and
// reports its progress until it ends.
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

describe('/api/projections/rebuilds/', () => {
  it('starts a rebuild of the events read models, refuses a second one meanwhile, and it finishes at the head', async () => {
    await capture({ url: t.url, projectApiKey: t.projectApiKey }, [
      { event: 'rebuilt_one', properties: { distinct_id: 'rb-1' } },
    ]);
    const started = await t.api('POST', '/api/projections/rebuilds/', {});
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ target: 'events', status: 'queued', error: null });

    const second = await t.api('POST', '/api/projections/rebuilds/', { target: 'events' });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ code: 'rebuild_in_progress' });

    let rebuild = started.body;
    for (let i = 0; i < 300 && !['finished', 'failed'].includes(rebuild.status); i++) {
      await new Promise((r) => setTimeout(r, 100));
      rebuild = (await t.api('GET', `/api/projections/rebuilds/${started.body.id}/`)).body;
    }
    expect(rebuild).toMatchObject({ status: 'finished', error: null });
    expect(rebuild.position).toBe(rebuild.head);
    expect(rebuild.finished_at).not.toBeNull();

    const list = await t.api('GET', '/api/projections/rebuilds/?limit=1');
    expect(list.body.results.map((r: { id: number }) => r.id)).toEqual([started.body.id]);
    // the rebuilt read model still answers the captured event
    const events = await t.api('GET', `/api/projects/${t.projectId}/events/?event=rebuilt_one`);
    expect(events.body.results).toHaveLength(1);
  });

  it('answers bad input in the error shape, and only to a key with every scope', async () => {
    const bad = await t.api('POST', '/api/projections/rebuilds/', { target: 'persons' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'validation_error' });
    expect((await t.api('GET', '/api/projections/rebuilds/?limit=101')).status).toBe(400);
    expect((await t.api('GET', '/api/projections/rebuilds/999999/')).status).toBe(404);
    expect((await t.api('GET', '/api/projections/rebuilds/nope/')).status).toBe(404);

    const { key } = await newUser(t, { scopes: ['person:read', 'feature_flag:write'] });
    const refused = await t.api('POST', '/api/projections/rebuilds/', {}, key);
    expect(refused.status).toBe(403);
    expect((await t.api('GET', '/api/projections/rebuilds/', undefined, null)).status).toBe(401);
  });
});
