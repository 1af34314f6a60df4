import { afterAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * A query that runs for seconds: a filtered count over a long generated sequence (a plain
 * `count()` of `numbers()` can be answered without reading it, and once ended within the wait).
 */
const SLOW = 'select count() from numbers(1000000000) where number % 7 = 3';
const SLOW_COUNT = Math.floor((1_000_000_000 - 1 - 3) / 7) + 1;

const AT_CAPACITY = {
  type: 'server_error',
  code: 'service_unavailable',
  detail: 'The server is running as many queries as it takes at once; retry shortly.',
  attr: null,
};

const services: TestService[] = [];
afterAll(async () => Promise.all(services.map((t) => t.close())));

/** A service taking one synchronous query at a time, with the given queue. */
async function oneAtATime(queue: { QUERY_MAX_WAITING: string; QUERY_QUEUE_WAIT_MS: string }) {
  const t = await startTestService({ QUERY_MAX_RUNNING: '1', ...queue });
  services.push(t);
  /** POST /query with a HogQL text: its status, Retry-After, body and when it was answered. */
  const hogql = async (query: string) => {
    const res = await fetch(`${t.url}/api/projects/${t.projectId}/query/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.personalApiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: { kind: 'HogQLQuery', query } }),
    });
    const body = await res.json();
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body, at: Date.now() };
  };
  /** Sends a query; resolves once it holds the slot (the gate's gauge in /metrics says so) with its answer to come. */
  const running = async (query: string) => {
    const answer = hogql(query);
    for (;;) {
      const metrics = await (await fetch(`${t.url}/metrics`)).text();
      if (/^hogstream_query_runs\{state="running"\} 1$/m.test(metrics)) return { answer };
      await pause(20);
    }
  };
  return { hogql, running };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('synchronous /query runs, server-wide (QUERY_MAX_RUNNING)', () => {
  it('with no room to wait, a query beside a running one is refused at once: 503 with Retry-After', async () => {
    const { hogql, running } = await oneAtATime({
      QUERY_MAX_WAITING: '0',
      QUERY_QUEUE_WAIT_MS: '60000',
    });
    const slow = (await running(SLOW)).answer;
    const refused = await hogql('select 1');
    const done = await slow;
    expect(refused.status, JSON.stringify(refused.body)).toBe(503);
    expect(refused.retryAfter).toBe('2');
    expect(refused.body).toEqual(AT_CAPACITY);
    expect(refused.at).toBeLessThan(done.at); // while the slow one ran

    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.results).toEqual([[SLOW_COUNT]]);
    // its slot is free again
    const after = await hogql('select 2');
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(after.body.results).toEqual([[2]]);
  });

  it('a query that waits longer than QUERY_QUEUE_WAIT_MS for a slot: 503 with Retry-After', async () => {
    const { hogql, running } = await oneAtATime({
      QUERY_MAX_WAITING: '5',
      QUERY_QUEUE_WAIT_MS: '100',
    });
    const slow = (await running(SLOW)).answer;
    const sent = Date.now();
    const waited = await hogql('select 3');
    const done = await slow;
    expect(waited.status, JSON.stringify(waited.body)).toBe(503);
    expect(waited.retryAfter).toBe('2');
    expect(waited.body).toEqual(AT_CAPACITY);
    expect(waited.at - sent).toBeGreaterThanOrEqual(100);
    expect(waited.at).toBeLessThan(done.at);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
  });

  it('a query that finds a slot within QUERY_QUEUE_WAIT_MS runs once the running one ends', async () => {
    const { hogql, running } = await oneAtATime({
      QUERY_MAX_WAITING: '5',
      QUERY_QUEUE_WAIT_MS: '60000',
    });
    const slow = (await running(SLOW)).answer;
    const next = await hogql('select 4');
    const done = await slow;
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.results).toEqual([[4]]);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(next.at).toBeGreaterThanOrEqual(done.at);
  });
});
