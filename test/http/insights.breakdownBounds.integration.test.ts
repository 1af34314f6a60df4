import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trendSeries } from '../../projections/analytics/trendsReader.ts';
import { type ClickHouse, openClickHouse } from '../../src/runtime/clickhouse.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Issue #26: a breakdown on a property unique per event, hourly over a year, is bounded in
// ClickHouse: the top `breakdown_limit` values (most events first) and the rest summed as
// PostHog's "Other" ($$_posthog_breakdown_other_$$). Clock 2024-06-10 12:00 UTC.
const NOW = new Date('2024-06-10T12:00:00Z');
const UNIQUE = 1_200;
const OTHER = '$$_posthog_breakdown_other_$$';
let t: TestService;
let ch: ClickHouse;

const hoursAgo = (h: number) => new Date(NOW.getTime() - h * 3_600_000).toISOString();
const pageview = (i: number, sid: string, at: string) => ({
  event: '$pageview',
  distinct_id: `user-${i % 50}`,
  timestamp: at,
  properties: { sid },
});

beforeAll(async () => {
  t = await startTestService({}, { now: () => NOW });
  const target = { url: t.url, projectApiKey: t.projectApiKey };
  // "a" 5 events, "b" 4, "c" 3, then 1,200 values seen once, one every 7 hours over the year
  const frequent = [
    ...Array.from({ length: 5 }, (_, i) => pageview(i, 'a', hoursAgo(3 + i))),
    ...Array.from({ length: 4 }, (_, i) => pageview(i, 'b', hoursAgo(30 + i))),
    ...Array.from({ length: 3 }, (_, i) => pageview(i, 'c', hoursAgo(60 + i))),
  ];
  await capture(target, frequent);
  for (let start = 0; start < UNIQUE; start += 400)
    await capture(
      target,
      Array.from({ length: 400 }, (_, k) => {
        const i = start + k;
        return pageview(i, `sid-${String(i).padStart(5, '0')}`, hoursAgo(100 + i * 7));
      }),
    );
  ch = await openClickHouse(undefined, t.config.chdbPath, t.config.clickhouseDatabase);
}, 180_000);
afterAll(async () => {
  await ch?.close();
  await t?.close();
});

type Series = { label: string; breakdown_value?: string; count: number; data: number[] };
const trend = async (query: string) => {
  const started = performance.now();
  const res = await t.api('GET', `/api/projects/${t.projectId}/insights/trend/?${query}`);
  expect(res.status, res.text).toBe(200);
  return { result: res.body.result as Series[], ms: performance.now() - started };
};
const PV = encodeURIComponent(JSON.stringify([{ id: '$pageview' }]));
const HOURLY = `events=${PV}&breakdown=sid&interval=hour`;
const YEAR_HOURLY = `${HOURLY}&date_from=-365d`;

describe('insights/trend breakdown bounded in ClickHouse', () => {
  it('answers the top values and "Other" over 8,760 hourly buckets within seconds', async () => {
    const { result, ms } = await trend(`${YEAR_HOURLY}&breakdown_limit=2`);
    expect(result.map((s) => [s.breakdown_value, s.count])).toEqual([
      ['a', 5],
      ['b', 4],
      [OTHER, 3 + UNIQUE],
    ]);
    expect(result[2]!.label).toBe('$pageview - Other');
    expect(result[0]!.data).toHaveLength(8_761); // -365d from the start of its hour, to now
    expect(result[2]!.data.reduce((a, b) => a + b, 0)).toBe(3 + UNIQUE);
    expect(ms).toBeLessThan(5_000);
  });

  it('leaves "Other" out when nothing is past the limit, and on breakdown_hide_other_aggregation', async () => {
    const all = await trend(`${HOURLY}&breakdown_limit=1000&date_from=-2d`);
    expect(all.result.map((s) => s.breakdown_value)).toEqual(['a', 'b']);
    const hidden = await trend(
      `${YEAR_HOURLY}&breakdown_limit=1&breakdown_hide_other_aggregation=true`,
    );
    expect(hidden.result.map((s) => [s.breakdown_value, s.count])).toEqual([['a', 5]]);
  });

  it('receives at most (limit + 1) × buckets rows from ClickHouse', async () => {
    const rows = await trendSeries(ch, {
      projectId: t.projectId,
      now: NOW,
      event: '$pageview',
      from: hoursAgo(24 * 366),
      to: NOW.toISOString(),
      properties: undefined,
      personIdSets: [],
      interval: 'hour',
      breakdown: { key: 'sid' },
      breakdownLimit: 2,
    });
    const values = new Set(rows.map((r) => r.breakdownValue));
    expect(values).toEqual(new Set(['a', 'b', OTHER]));
    // one row per (bucket, value) with events: a 5, b 4, and "Other" one per event hour
    expect(rows.length).toBe(5 + 4 + 3 + UNIQUE);
  });
});
