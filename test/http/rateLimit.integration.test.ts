import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/testService.ts';
import { newUser } from './helpers.ts';

// Two services: one with the per-key limit alone, one whose per-address limit is low, so the
// address budget of one does not depend on what the other's tests spent.
let perKey: TestService;
let perAddress: TestService;
beforeAll(async () => {
  [perKey, perAddress] = await Promise.all([
    startTestService({ API_RATE_LIMIT_PER_MINUTE: '5', API_RATE_LIMIT_PER_IP_PER_MINUTE: '0' }),
    startTestService({ API_RATE_LIMIT_PER_MINUTE: '0', API_RATE_LIMIT_PER_IP_PER_MINUTE: '40' }),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([perKey?.close(), perAddress?.close()]);
});

const get = (t: TestService, authorization?: string) =>
  fetch(`${t.url}/api/projects/`, { headers: authorization ? { authorization } : {} }).then(
    async (r) => ({
      status: r.status,
      retryAfter: r.headers.get('retry-after'),
      body: (await r.json()) as Record<string, unknown>,
    }),
  );

describe('/api rate limit per personal API key', () => {
  it('answers 429 throttled with Retry-After past the limit; other keys are not affected', async () => {
    for (let i = 0; i < 5; i++)
      expect((await get(perKey, `Bearer ${perKey.personalApiKey}`)).status).toBe(200);
    const over = await get(perKey, `Bearer ${perKey.personalApiKey}`);
    expect(over.status).toBe(429);
    expect(Number(over.retryAfter)).toBeGreaterThan(0);
    expect(over.body).toMatchObject({ type: 'throttled_error', code: 'throttled', attr: null });
    expect(over.body.detail).toMatch(
      /^Request was throttled\. Expected available in \d+ seconds\.$/,
    );
    // Another key has its own budget (an unknown one is counted too, and refused by auth).
    expect((await get(perKey, 'Bearer phx_unknown_key_for_limit')).status).toBe(401);
  });

  it('counts every spelling authentication accepts as the same key', async () => {
    const { key } = await newUser(perKey);
    const spellings = [`Bearer ${key}`, `bearer ${key}`, `Bearer  ${key}`, `Bearer ${key} `];
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await get(perKey, spellings[i % 4])).status);
    // Before the fix each spelling had its own budget of 5: 12 × 200.
    expect(statuses).toEqual([...Array(5).fill(200), ...Array(7).fill(429)]);
  });

  it('counts a bad key before authentication refuses it', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++)
      statuses.push((await get(perKey, `Bearer${i % 2 ? '  ' : ' '}phx_bad_key_counted`)).status);
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(3).fill(429)]);
  });
});

describe('/api rate limit per client address', () => {
  it('counts refused and anonymous requests: a flood of bad keys from one address reaches 429', async () => {
    const statuses: number[] = [];
    // Every request a different bad key (or none): no per-key budget ever fills up.
    for (let i = 0; i < 60; i++)
      statuses.push((await get(perAddress, i % 3 ? `Bearer phx_bad_${i}` : undefined)).status);
    expect(statuses.slice(0, 40).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(40).every((s) => s === 429)).toBe(true);
    // The address is throttled as a whole, a good key included, with the API's error shape.
    const good = await get(perAddress, `Bearer ${perAddress.personalApiKey}`);
    expect(good.status).toBe(429);
    expect(Number(good.retryAfter)).toBeGreaterThan(0);
    expect(good.body).toMatchObject({ type: 'throttled_error', code: 'throttled' });
  });
});
