import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { createFlag, expectError, flagPath } from './helpers.ts';

// Flag usage dashboards (issue #10): dashboard/ creates the template's tiles, enrich_usage_dashboard/
// adds the $feature/<key> ones, dashboards/:id/ computes them. Clock: 2024-09-10 12:00 UTC, so
// the tiles' -30d range starts 2024-08-11 and ends today (31 days).
const NOW = new Date('2024-09-10T12:00:00Z');
let t: TestService;
let flag: { id: number; key: string };

beforeAll(async () => {
  t = await startTestService({}, { now: () => NOW });
  flag = await createFlag(t, {
    key: 'new-checkout',
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: {
        variants: [
          { key: 'control', rollout_percentage: 50 },
          { key: 'test', rollout_percentage: 50 },
        ],
      },
    },
  });
  const called = (
    distinctId: string,
    timestamp: string,
    response: string,
    key = 'new-checkout',
  ) => ({
    event: '$feature_flag_called',
    distinct_id: distinctId,
    timestamp,
    properties: { $feature_flag: key, $feature_flag_response: response },
  });
  await capture({ url: t.url, projectApiKey: t.projectApiKey }, [
    called('u1', '2024-09-08T10:00:00Z', 'control'),
    called('u1', '2024-09-08T11:00:00Z', 'control'),
    called('u2', '2024-09-08T12:00:00Z', 'test'),
    called('u3', '2024-09-09T09:00:00Z', 'test'),
    called('u3', '2024-09-10T09:00:00Z', 'test'),
    called('u4', '2024-09-09T09:00:00Z', 'on', 'another-flag'),
    called('u5', '2024-08-01T09:00:00Z', 'control'), // before the range
    {
      event: '$pageview',
      distinct_id: 'u1',
      timestamp: '2024-09-08T10:05:00Z',
      properties: { '$feature/new-checkout': 'control' },
    },
    {
      event: '$pageview',
      distinct_id: 'u2',
      timestamp: '2024-09-08T12:05:00Z',
      properties: { '$feature/new-checkout': 'test' },
    },
    {
      event: 'purchased',
      distinct_id: 'u2',
      timestamp: '2024-09-09T12:05:00Z',
      properties: { '$feature/new-checkout': 'test' },
    },
    { event: '$pageview', distinct_id: 'u9', timestamp: '2024-09-09T12:05:00Z' },
  ]);
}, 60_000);
afterAll(async () => t?.close());

type Series = {
  label: string;
  breakdown_value?: string;
  data: number[];
  days: string[];
  count: number;
};
type Dashboard = { id: number; tiles: { insight: { name: string; result: Series[] } }[] };
const last3 = (s: Series) => s.data.slice(-3); // Sep 8, 9, 10

describe('flag usage dashboards', () => {
  it('refuses to enrich before the dashboard exists', async () => {
    expectError(
      await t.api('POST', `${flagPath(t.projectId, flag.id)}enrich_usage_dashboard/`, {}),
      400,
    );
  });

  it('creates the usage dashboard once and names it on the flag', async () => {
    const res = await t.api('POST', `${flagPath(t.projectId, flag.id)}dashboard/`, {});
    expect(res.status, res.text).toBe(200);
    expect(res.body.usage_dashboard).toEqual(expect.any(Number));
    const again = await t.api('POST', `${flagPath(t.projectId, flag.id)}dashboard/`, {});
    expect(again.body.usage_dashboard).toBe(res.body.usage_dashboard);
    const read = await t.api('GET', flagPath(t.projectId, flag.id));
    expect(read.body.usage_dashboard).toBe(res.body.usage_dashboard);
  });

  it('computes daily calls and unique users per response', async () => {
    const id = (await t.api('GET', flagPath(t.projectId, flag.id))).body.usage_dashboard;
    const res = await t.api('GET', `/api/projects/${t.projectId}/dashboards/${id}/`);
    expect(res.status, res.text).toBe(200);
    const dashboard = res.body as Dashboard;
    expect(dashboard.tiles.map((tile) => tile.insight.name)).toEqual([
      'Feature Flag Called Total Volume',
      'Feature Flag calls made by unique users per variant',
    ]);
    const [volume, unique] = dashboard.tiles.map((tile) => tile.insight.result);
    expect(volume![0]!.days).toHaveLength(31);
    expect(volume![0]!.days[0]).toBe('2024-08-11');
    expect(volume!.map((s) => [s.breakdown_value, last3(s), s.count])).toEqual([
      ['test', [1, 1, 1], 3],
      ['control', [2, 0, 0], 2],
    ]);
    expect(unique!.map((s) => [s.breakdown_value, last3(s), s.count])).toEqual([
      ['test', [1, 1, 1], 3],
      ['control', [1, 0, 0], 1],
    ]);
  });

  it('enriches it with the events carrying $feature/<key>, by variant', async () => {
    const res = await t.api('POST', `${flagPath(t.projectId, flag.id)}enrich_usage_dashboard/`, {});
    expect(res.status, res.text).toBe(200);
    expect(res.body.has_enriched_analytics).toBe(true);
    const dashboard = (
      await t.api('GET', `/api/projects/${t.projectId}/dashboards/${res.body.usage_dashboard}/`)
    ).body as Dashboard;
    expect(dashboard.tiles).toHaveLength(4);
    const [events, users] = dashboard.tiles.slice(2).map((tile) => tile.insight.result);
    expect(events!.map((s) => [s.breakdown_value, last3(s)])).toEqual([
      ['test', [1, 1, 0]],
      ['control', [1, 0, 0]],
    ]);
    expect(users!.map((s) => [s.breakdown_value, s.count])).toEqual([
      ['test', 2],
      ['control', 1],
    ]);
    // enriching again adds nothing
    await t.api('POST', `${flagPath(t.projectId, flag.id)}enrich_usage_dashboard/`, {});
    const again = (
      await t.api('GET', `/api/projects/${t.projectId}/dashboards/${res.body.usage_dashboard}/`)
    ).body as Dashboard;
    expect(again.tiles).toHaveLength(4);
  });

  it('answers 404 for a dashboard that is not there', async () => {
    expectError(await t.api('GET', `/api/projects/${t.projectId}/dashboards/999999/`), 404);
    expectError(await t.api('GET', `/api/projects/${t.projectId}/dashboards/words/`), 404);
  });
});
