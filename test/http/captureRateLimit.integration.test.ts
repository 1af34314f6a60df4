import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFromLog } from '../support/captureReadback.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/** A project over its capture rate: 200 still, the excess dropped and listed as an ingestion warning. */
let t: TestService;
beforeAll(async () => {
  t = await startTestService({
    CAPTURE_RATE_LIMIT_EVENTS_PER_SECOND: '1',
    CAPTURE_RATE_LIMIT_BURST: '20',
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe('capture rate limit per project', () => {
  it('keeps the burst, drops the rest with a rate_limited warning, answers 200', async () => {
    const res = await fetch(`${t.url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        api_key: t.projectApiKey,
        batch: Array.from({ length: 30 }, (_, i) => ({
          event: 'quota',
          distinct_id: `quota-${i}`,
        })),
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 1 });
    expect(await readFromLog(t, { event: 'quota' })).toHaveLength(20);
    let warning: { details: { dropped: number } } | undefined;
    for (let i = 0; i < 50 && !warning; i++) {
      const listed = await t.api('GET', `/api/projects/${t.projectId}/ingestion_warnings/`);
      warning = (
        listed.body.results as { type: string; warnings: { details: { dropped: number } }[] }[]
      ).find((g) => g.type === 'rate_limited')?.warnings[0];
      if (!warning) await new Promise((r) => setTimeout(r, 100));
    }
    expect(warning?.details.dropped).toBe(10);
  });
});
