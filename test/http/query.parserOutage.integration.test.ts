import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replaceParserThread } from '../../projections/hogql/parser.ts';
import { startTestService, type TestService } from '../support/testService.ts';

let t: TestService;

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  replaceParserThread();
  await t?.close();
});

/** POST /query with a HogQL text, keeping the answer's headers (Retry-After). */
async function hogql(query: string) {
  const res = await fetch(`${t.url}/api/projects/${t.projectId}/query/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.personalApiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: { kind: 'HogQLQuery', query } }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

const failing = (how: 'throw' | 'hang' | 'die') =>
  replaceParserThread({
    entry: new URL('../support/failingParserWorker.ts', import.meta.url),
    data: how,
    startTimeoutMs: 1_000,
  });

describe('/query when the HogQL parser thread is down', () => {
  it.each([
    ['cannot load', 'throw', 11],
    ['does not start in time', 'hang', 12],
    ['dies under a parse', 'die', 13],
  ] as const)(
    'a parser thread that %s: 503 with Retry-After, then the next query starts a working one',
    async (_, how, n) => {
      failing(how);
      // a text no other file parsed (the parse cache is process-wide); a failed parse is not
      // cached, so the same text parses once healed
      const text = `select ${n} + 1 as outage_${process.pid}_${Date.now()}`;
      const down = await hogql(text);
      expect(down.status, JSON.stringify(down.body)).toBe(503);
      expect(down.retryAfter).toBe('2');
      expect(down.body).toEqual({
        type: 'server_error',
        code: 'service_unavailable',
        detail: 'The HogQL parser is not running (it is being restarted); retry shortly.',
        attr: null,
      });

      replaceParserThread();
      const healed = await hogql(text);
      expect(healed.status, JSON.stringify(healed.body)).toBe(200);
      expect(healed.body.results).toEqual([[n + 1]]);
    },
    90_000,
  );
});
