import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * A page of large events is read and sent in parts of at most EVENTS_PAGE_MAX_BYTES of event data,
 * and still whole: a page shorter than `limit` is only ever the last one (clients such as Airbyte's
 * connector stop there).
 */
let t: TestService;
const BIG = 'b'.repeat(300_000);
beforeAll(async () => {
  t = await startTestService({ EVENTS_PAGE_MAX_BYTES: String(1_000_000) });
  await capture(
    t,
    Array.from({ length: 10 }, (_, i) => ({
      event: 'heavy',
      distinct_id: `heavy-${i}`,
      timestamp: new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString(),
      properties: { big: BIG },
    })),
  );
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const walk = async (first: string) => {
  const pages: number[] = [];
  const seen: string[] = [];
  for (let path: string | null = first; path; ) {
    const res = await t.api('GET', path);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    pages.push(res.body.results.length);
    seen.push(...res.body.results.map((e: { distinct_id: string }) => e.distinct_id));
    path = res.body.next ? new URL(res.body.next).pathname + new URL(res.body.next).search : null;
  }
  return { pages, seen };
};

describe('events list byte budget', () => {
  it('sends a page larger than the budget whole, in parts, each event once and in order', async () => {
    const res = await t.api('GET', `/api/projects/${t.projectId}/events/?event=heavy&limit=100`);
    expect(res.status).toBe(200);
    expect(res.body.next).toBeNull();
    const ids = res.body.results.map((e: { distinct_id: string }) => e.distinct_id);
    expect(ids).toEqual(Array.from({ length: 10 }, (_, i) => `heavy-${9 - i}`));
    expect(res.body.results[0].properties.big).toBe(BIG);
    expect(res.body.results[0].person).not.toBeNull();
  });

  it('pages of limit events, short only at the end, by timestamp cursor and by offset', async () => {
    const byTime = await walk(`/api/projects/${t.projectId}/events/?event=heavy&limit=4`);
    expect(byTime.pages).toEqual([4, 4, 2]);
    expect(new Set(byTime.seen).size).toBe(10);
    const byId = await walk(
      `/api/projects/${t.projectId}/events/?event=heavy&limit=4&orderBy=${encodeURIComponent('["distinct_id"]')}`,
    );
    expect(byId.pages).toEqual([4, 4, 2]);
    expect(byId.seen).toEqual([...byId.seen].sort());
    expect(new Set(byId.seen).size).toBe(10);
  });

  it('refuses a CSV page over the budget instead of cutting it short', async () => {
    const res = await t.api('GET', `/api/projects/${t.projectId}/events/?event=heavy&format=csv`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', attr: 'limit' });
    const small = await t.api(
      'GET',
      `/api/projects/${t.projectId}/events/?event=heavy&format=csv&limit=3`,
    );
    expect(small.status).toBe(200);
  });
});
