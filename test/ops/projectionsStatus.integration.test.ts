import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser } from '../http/helpers.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Issue #12: GET /api/projections/ answers what `cli status` prints, to an administrator's key.
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

describe('GET /api/projections/', () => {
  it('lists every read model with its position, pending events and lag, caught up after capture', async () => {
    await capture({ url: t.url, projectApiKey: t.projectApiKey }, [
      { event: '$identify', properties: { distinct_id: 'status-1', $set: { email: 'a@b.c' } } },
    ]);
    let body: {
      head: string;
      read_models: {
        name: string;
        position: string;
        pending_events: string;
        lag_seconds: number;
      }[];
    } = { head: '0', read_models: [] };
    for (let i = 0; i < 100; i++) {
      const res = await t.api('GET', '/api/projections/');
      expect(res.status).toBe(200);
      body = res.body;
      if (body.read_models.every((m) => m.pending_events === '0')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const names = body.read_models.map((m) => m.name);
    expect(names).toEqual(
      expect.arrayContaining(['persons', 'feature_flags', 'clickhouse:events']),
    );
    expect(BigInt(body.head)).toBeGreaterThan(0n);
    for (const m of body.read_models) {
      expect(m.pending_events).toBe('0');
      expect(m.lag_seconds).toBe(0);
    }
    const persons = body.read_models.find((m) => m.name === 'persons')!;
    expect(BigInt(persons.position)).toBeGreaterThan(0n);
  });

  it('refuses a key without every scope, and a request without a key', async () => {
    const { key } = await newUser(t, { scopes: ['person:read', 'feature_flag:write'] });
    const limited = await t.api('GET', '/api/projections/', undefined, key);
    expect(limited.status).toBe(403);
    expect(limited.body).toMatchObject({ type: 'authentication_error', code: 'permission_denied' });
    expect((await t.api('GET', '/api/projections/', undefined, null)).status).toBe(401);
  });
});
