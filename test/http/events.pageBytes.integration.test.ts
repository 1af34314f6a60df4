import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/** A page of the events list carries at most EVENTS_PAGE_MAX_BYTES of event data; the rest follows by `next`. */
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
    expect(res.status, res.text).toBe(200);
    expect(res.text.length).toBeLessThan(1_000_000 + 100_000);
    pages.push(res.body.results.length);
    seen.push(...res.body.results.map((e: { distinct_id: string }) => e.distinct_id));
    path = res.body.next ? new URL(res.body.next).pathname + new URL(res.body.next).search : null;
  }
  return { pages, seen };
};

describe('events list byte budget', () => {
  it('cuts a page of large events short and continues by timestamp cursor, every event once', async () => {
    const { pages, seen } = await walk(
      `/api/projects/${t.projectId}/events/?event=heavy&limit=100`,
    );
    expect(pages.every((n) => n >= 1 && n <= 3)).toBe(true);
    expect(new Set(seen).size).toBe(10);
    expect(seen).toHaveLength(10);
  });

  it('continues by offset when the order is not by timestamp', async () => {
    const { pages, seen } = await walk(
      `/api/projects/${t.projectId}/events/?event=heavy&limit=100&orderBy=${encodeURIComponent('["distinct_id"]')}`,
    );
    expect(pages.length).toBeGreaterThan(3);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(10);
  });
});
