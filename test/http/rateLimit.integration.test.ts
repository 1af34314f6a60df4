import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ API_RATE_LIMIT_PER_MINUTE: '5' });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const get = (key: string) =>
  fetch(`${t.url}/api/projects/`, { headers: { authorization: `Bearer ${key}` } }).then(
    async (r) => ({
      status: r.status,
      retryAfter: r.headers.get('retry-after'),
      body: (await r.json()) as Record<string, unknown>,
    }),
  );

describe('/api rate limit per personal API key', () => {
  it('answers 429 throttled with Retry-After past the limit; other keys are not affected', async () => {
    for (let i = 0; i < 5; i++) expect((await get(t.personalApiKey)).status).toBe(200);
    const over = await get(t.personalApiKey);
    expect(over.status).toBe(429);
    expect(Number(over.retryAfter)).toBeGreaterThan(0);
    expect(over.body).toMatchObject({ type: 'throttled_error', code: 'throttled', attr: null });
    expect(over.body.detail).toMatch(
      /^Request was throttled\. Expected available in \d+ seconds\.$/,
    );
    // Another key has its own budget (an unknown one is counted too, and refused by auth).
    expect((await get('phx_unknown_key_for_limit')).status).toBe(401);
  });
});
