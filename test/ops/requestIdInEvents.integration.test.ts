import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';

// Issue #12: a caller's X-Request-Id names the events its request appended (metadata.correlationId),
// so a log line, a client's trace and the audit trail can be joined.
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

const newest = async (type: string) => {
  const [e] = await t.service.ctx.store.readAll({
    direction: 'backwards',
    before: 'end',
    maxCount: 1,
    filter: { eventTypes: [type] },
  });
  return e!;
};

describe('X-Request-Id in the metadata of appended events', () => {
  it('capture: the events of a request carry the caller’s id; without one, none', async () => {
    const send = (headers: Record<string, string>, distinctId: string) =>
      fetch(`${t.url}/batch/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({
          api_key: t.projectApiKey,
          batch: [{ event: 'e', properties: { distinct_id: distinctId } }],
        }),
      });
    const res = await send({ 'x-request-id': 'trace-capture-1' }, 'rid-1');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('trace-capture-1');
    const withId = await newest('EventCaptured');
    expect(withId.metadata.correlationId).toBe('trace-capture-1');
    expect((withId.data as { distinctId: string }).distinctId).toBe('rid-1');

    expect((await send({}, 'rid-2')).status).toBe(200);
    const without = await newest('EventCaptured');
    expect((without.data as { distinctId: string }).distinctId).toBe('rid-2');
    expect(without.metadata.correlationId).toBeUndefined();
  });

  it('a REST write: the command’s events carry the id', async () => {
    const res = await fetch(`${t.url}/api/projects/${t.projectId}/feature_flags/`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.personalApiKey}`,
        'content-type': 'application/json',
        'x-request-id': 'trace-flag-1',
      },
      body: JSON.stringify({ key: 'rid-flag', name: 'n', filters: { groups: [] } }),
    });
    expect(res.status).toBe(201);
    const created = await newest('FeatureFlagCreated');
    expect(created.metadata.correlationId).toBe('trace-flag-1');
  });
});
