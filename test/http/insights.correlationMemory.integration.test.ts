import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Issue #26: person property correlation reads only the requested keys, a batch of persons at a
// time, never every funnel person's whole property set. 1,500 persons carry ≈ 30 KB of
// properties each (≈ 45 MB in all); the answer's odds ratios are counted by hand below.
const NOW = new Date('2024-06-10T12:00:00Z');
const PERSONS = 1_500;
const FAT = 'x'.repeat(30_000);
let t: TestService;

// every 3rd person is "gold" and converts; of the others, every 2nd "silver" converts
const tier = (i: number) => (i % 3 === 0 ? 'gold' : 'silver');
const converts = (i: number) => i % 3 === 0 || i % 2 === 0;

beforeAll(async () => {
  t = await startTestService({}, { now: () => NOW });
  const target = { url: t.url, projectApiKey: t.projectApiKey };
  for (let start = 0; start < PERSONS; start += 150) {
    const batch = [];
    for (let i = start; i < start + 150; i++) {
      const at = new Date(Date.UTC(2024, 5, 2, 0, 0, i)).toISOString();
      batch.push({
        event: '$pageview',
        distinct_id: `p${i}`,
        timestamp: at,
        properties: { $set: { tier: tier(i), notes: FAT, [`own_${i}`]: i } },
      });
      if (converts(i))
        batch.push({
          event: 'purchased',
          distinct_id: `p${i}`,
          timestamp: new Date(Date.parse(at) + 60_000).toISOString(),
        });
    }
    await capture(target, batch);
  }
}, 300_000);
afterAll(async () => t?.close());

const FUNNEL = `events=${encodeURIComponent(JSON.stringify([{ id: '$pageview' }, { id: 'purchased' }]))}&date_from=2024-06-01&date_to=2024-06-09`;

/**
 * How far this process's memory (it hosts the test service) grows while `work` runs: the peak of
 * RSS and of the JavaScript heap in use over their values before, sampled every 5 ms. RSS alone
 * misses allocations that fit in pages ingestion already took; the heap sees them.
 */
async function peakGrowth<T>(
  work: () => Promise<T>,
): Promise<{ value: T; rssMiB: number; heapMiB: number }> {
  const before = process.memoryUsage();
  const peak = { rss: before.rss, heap: before.heapUsed };
  const sample = () => {
    const now = process.memoryUsage();
    peak.rss = Math.max(peak.rss, now.rss);
    peak.heap = Math.max(peak.heap, now.heapUsed);
  };
  const sampler = setInterval(sample, 5);
  try {
    const value = await work();
    sample();
    const mib = (n: number) => n / 1024 ** 2;
    return {
      value,
      rssMiB: mib(peak.rss - before.rss),
      heapMiB: mib(peak.heap - before.heapUsed),
    };
  } finally {
    clearInterval(sampler);
  }
}

describe('person property correlation over fat persons', () => {
  it('gives the odds ratios of the requested key without reading whole property sets', async () => {
    const names = encodeURIComponent('["tier"]');
    const url = `/api/projects/${t.projectId}/insights/funnel/correlation/?${FUNNEL}&funnel_correlation_type=properties&funnel_correlation_names=${names}`;
    // warm with the same funnel's event correlation: ClickHouse's first query allocates what any would
    await t.api('GET', url.replace(/&funnel_correlation_type=.*/, ''));
    const { value: res, rssMiB, heapMiB } = await peakGrowth(() => t.api('GET', url));
    expect(res.status, res.text).toBe(200);
    // gold: 500 persons, all converted; silver: 1,000, of which the 500 even ones converted
    const S = 1_000;
    const F = 500;
    const odds = (s: number, f: number) => (s + 1) / (S - s + 1) / ((f + 1) / (F - f + 1));
    const rows = res.body.result.events as {
      event: { event: string };
      success_count: number;
      failure_count: number;
      odds_ratio: number;
    }[];
    expect(
      rows.map((r) => [r.event.event, r.success_count, r.failure_count, r.odds_ratio]),
    ).toEqual([
      ['tier::gold', 500, 0, odds(500, 0)],
      ['tier::silver', 500, 500, odds(500, 500)],
    ]);
    console.log(
      `correlation over ${PERSONS} fat persons: RSS +${rssMiB.toFixed(0)} MiB, heap +${heapMiB.toFixed(0)} MiB`,
    );
    expect(rssMiB).toBeLessThan(200);
    expect(heapMiB).toBeLessThan(25);
  });
});
