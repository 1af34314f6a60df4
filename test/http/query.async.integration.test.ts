import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectError } from './helpers.ts';

let t: TestService;
let path: string;

// one running query per project, so a second one is refused while the first runs
beforeAll(async () => {
  t = await startTestService({ QUERY_ASYNC_MAX_RUNNING: '1' });
  path = `/api/projects/${t.projectId}/query/`;
  await capture(t, [
    { event: 'viewed', properties: { distinct_id: 'ana' }, timestamp: '2024-05-01T10:00:00Z' },
    { event: 'viewed', properties: { distinct_id: 'bo' }, timestamp: '2024-05-01T11:00:00Z' },
  ]);
});
afterAll(async () => t?.close());

/** A query that runs for seconds: counting a long generated sequence. */
const SLOW = { kind: 'HogQLQuery', query: 'select count() from numbers(4000000000)' };

async function poll(id: string): Promise<{ status: number; body: any; text: string }> {
  for (let i = 0; i < 200; i++) {
    const res = await t.api('GET', `${path}${id}/`);
    if (res.status !== 202) return res;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`query ${id} still running`);
}

describe('asynchronous /query', () => {
  it('async: 202 with query_status, then the status with the results once complete', async () => {
    const started = await t.api('POST', path, {
      async: true,
      client_query_id: 'count-viewed',
      query: { kind: 'HogQLQuery', query: "select count() from events where event = 'viewed'" },
    });
    expect(started.status, started.text).toBe(202);
    expect(started.body.query_status).toMatchObject({
      id: 'count-viewed',
      team_id: t.projectId,
      query_async: true,
      complete: false,
      error: false,
    });
    const done = await poll('count-viewed');
    expect(done.status, done.text).toBe(200);
    expect(done.body.query_status).toMatchObject({ complete: true, error: false });
    expect(done.body.query_status.results).toMatchObject({ results: [[2]], columns: ['count()'] });
    expect(typeof done.body.query_status.expiration_time).toBe('string');
  });

  it('a query that fails in the background reports its error (400 with the status)', async () => {
    const started = await t.api('POST', path, {
      refresh: 'async',
      query: { kind: 'HogQLQuery', query: 'select nosuchfunction(1)' },
    });
    expect(started.status, started.text).toBe(202);
    const done = await poll(started.body.query_status.id);
    expect(done.status, done.text).toBe(400);
    expect(done.body.query_status).toMatchObject({ complete: true, error: true });
    expect(done.body.query_status.error_message).toMatch(/nosuchfunction/);
  });

  it('a second running query is refused with 429; cancelling frees the slot and forgets the query', async () => {
    const slow = await t.api('POST', path, { async: true, client_query_id: 'slow', query: SLOW });
    expect(slow.status, slow.text).toBe(202);
    const second = await t.api('POST', path, { async: true, query: SLOW });
    expectError(second, 429, { type: 'throttled_error' });
    expect(second.body.detail).toMatch(/at most 1/);

    const cancelled = await t.api('DELETE', `${path}slow/`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expectError(await t.api('GET', `${path}slow/`), 404);
    expectError(await t.api('DELETE', `${path}slow/`), 404);

    // the slot frees once the cancelled ClickHouse query has stopped
    let next = second;
    for (let i = 0; i < 100 && next.status === 429; i++) {
      await new Promise((r) => setTimeout(r, 100));
      next = await t.api('POST', path, {
        async: true,
        query: { kind: 'HogQLQuery', query: 'select 1' },
      });
    }
    expect(next.status, next.text).toBe(202);
    expect((await poll(next.body.query_status.id)).status).toBe(200);
  });

  it("another project's key cannot see a query's status", async () => {
    expectError(await t.api('GET', `/api/projects/${t.projectId + 999}/query/count-viewed/`), 404);
  });
});
