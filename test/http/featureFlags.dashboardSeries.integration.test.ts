import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { createFlag, expectError, flagPath, newProject, newUser } from './helpers.ts';

// Flag usage dashboards (issue #10), second suite: a boolean flag whose `$feature_flag_response`
// is true/false (JSON booleans), a person merged by $identify, the edges of the -30d range, every
// day of the 31-day series, a flag renamed after its dashboard exists, scopes and isolation.
// Clock: 2024-09-10 12:00 UTC, so the range is 2024-08-11 00:00 .. 2024-09-10 12:00 (inclusive);
// day index 0 is Aug 11, 20 is Aug 31, 21 is Sep 1, 30 is Sep 10. Counted by hand below.
const NOW = new Date('2024-09-10T12:00:00Z');
let t: TestService;
let flag: { id: number; key: string };

const called = (distinctId: string, timestamp: string, response: unknown, key = 'beta-banner') => ({
  event: '$feature_flag_called',
  distinct_id: distinctId,
  timestamp,
  properties: { $feature_flag: key, $feature_flag_response: response },
});
const carrying = (event: string, distinctId: string, timestamp: string, value?: unknown) => ({
  event,
  distinct_id: distinctId,
  timestamp,
  properties: value === undefined ? {} : { '$feature/beta-banner': value },
});

beforeAll(async () => {
  t = await startTestService({}, { now: () => NOW });
  flag = await createFlag(t, {
    key: 'beta-banner',
    filters: { groups: [{ properties: [], rollout_percentage: 50 }] },
  });
  const target = { url: t.url, projectApiKey: t.projectApiKey };
  await capture(target, [
    called('anon-1', '2024-08-10T23:59:59Z', false), // one second before the range
    called('anon-1', '2024-08-11T00:00:00Z', false), // day 0
    called('anon-1', '2024-08-31T23:59:59Z', false), // day 20
    called('anon-1', '2024-09-01T00:00:00Z', true), // day 21, before the merge
    carrying('$pageview', 'anon-1', '2024-09-01T00:05:00Z', true),
  ]);
  await capture(target, [
    {
      event: '$identify',
      distinct_id: 'alice',
      timestamp: '2024-09-01T05:00:00Z',
      properties: { $anon_distinct_id: 'anon-1' },
    },
  ]);
  await capture(target, [
    called('alice', '2024-09-01T10:00:00Z', true), // day 21: the same person as anon-1
    carrying('$pageview', 'alice', '2024-09-01T10:05:00Z', true),
    called('bob', '2024-09-01T11:00:00Z', true), // day 21
    carrying('$pageview', 'bob', '2024-09-02T09:00:00Z', true), // day 22
    called('carol', '2024-09-05T08:00:00Z', false), // day 25
    carrying('$pageview', 'carol', '2024-09-05T08:05:00Z', false),
    carrying('clicked_banner', 'carol', '2024-09-05T08:06:00Z', false),
    carrying('$pageview', 'eve', '2024-09-06T08:00:00Z'), // no $feature/beta-banner
    called('eve', '2024-09-06T08:00:00Z', 'on', 'other-flag'), // another flag
    called('dave', '2024-09-10T12:00:00Z', true), // day 30, the clock's own second
    called('dave', '2024-09-10T12:00:01Z', true), // after the clock
  ]);
}, 120_000);
afterAll(async () => t?.close());

type Series = {
  label: string;
  breakdown_value?: string;
  data: number[];
  days: string[];
  labels: string[];
  count: number;
};
type Tile = { insight: { name: string; description: string; filters: any; result: Series[] } };
type Dashboard = { id: number; feature_flag_id: number; tiles: Tile[] };

/** 31 days of zeros with the given values at the given day indexes. */
const days31 = (values: Record<number, number>) =>
  Array.from({ length: 31 }, (_, i) => values[i] ?? 0);
const flagAction = (action: string) => `${flagPath(t.projectId, flag.id)}${action}/`;
const dashboardPath = (id: number, projectId = t.projectId) =>
  `/api/projects/${projectId}/dashboards/${id}/`;
async function getDashboard(id: number): Promise<Dashboard> {
  const res = await t.api('GET', dashboardPath(id));
  expect(res.status, res.text).toBe(200);
  return res.body;
}
const summary = (series: Series[]) => series.map((s) => [s.label, s.breakdown_value, s.data]);

describe('usage dashboard of a boolean flag', () => {
  let dashboardId: number;

  it('computes every day of the calls and the unique users per response (merged persons)', async () => {
    const created = await t.api('POST', flagAction('dashboard'), {});
    expect(created.status, created.text).toBe(200);
    dashboardId = created.body.usage_dashboard;
    expect(created.body.has_enriched_analytics).toBe(false);
    const dashboard = await getDashboard(dashboardId);
    expect(dashboard.feature_flag_id).toBe(flag.id);
    const [volume, unique] = dashboard.tiles.map((tile) => tile.insight.result);
    expect(volume![0]!.days[0]).toBe('2024-08-11');
    expect(volume![0]!.days[30]).toBe('2024-09-10');
    expect(volume![0]!.labels[21]).toBe('1-Sep-2024');
    expect(summary(volume!)).toEqual([
      ['$feature_flag_called - true', 'true', days31({ 21: 3, 30: 1 })],
      ['$feature_flag_called - false', 'false', days31({ 0: 1, 20: 1, 25: 1 })],
    ]);
    expect(volume!.map((s) => s.count)).toEqual([4, 3]);
    // day 21: anon-1 and alice are one person, so two users (alice, bob), not three
    expect(summary(unique!)).toEqual([
      ['$feature_flag_called - false', 'false', days31({ 0: 1, 20: 1, 25: 1 })],
      ['$feature_flag_called - true', 'true', days31({ 21: 2, 30: 1 })],
    ]);
  });

  it('enriches it with the events carrying $feature/<key>, by value, users after merges', async () => {
    const res = await t.api('POST', flagAction('enrich_usage_dashboard'), {});
    expect(res.status, res.text).toBe(200);
    expect(res.body.has_enriched_analytics).toBe(true);
    const [events, users] = (await getDashboard(dashboardId)).tiles
      .slice(2)
      .map((tile) => tile.insight.result);
    expect(summary(events!)).toEqual([
      ['All events - true', 'true', days31({ 21: 2, 22: 1 })],
      ['All events - false', 'false', days31({ 25: 2 })],
    ]);
    expect(summary(users!)).toEqual([
      ['All events - true', 'true', days31({ 21: 1, 22: 1 })],
      ['All events - false', 'false', days31({ 25: 1 })],
    ]);
  });

  it('answers 404 from another project and for a deleted flag; concurrent creates agree', async () => {
    const other = await newProject(t);
    expectError(await t.api('GET', dashboardPath(dashboardId, other)), 404);
    const gone = await createFlag(t, {});
    await t.api('PATCH', flagPath(t.projectId, gone.id), { deleted: true });
    expectError(await t.api('POST', `${flagPath(t.projectId, gone.id)}dashboard/`, {}), 404);
    const fresh = await createFlag(t, {});
    const both = await Promise.all(
      [0, 1].map(() => t.api('POST', `${flagPath(t.projectId, fresh.id)}dashboard/`, {})),
    );
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(both[0]!.body.usage_dashboard).toEqual(expect.any(Number));
    expect(both[1]!.body.usage_dashboard).toBe(both[0]!.body.usage_dashboard);
  });

  it('needs feature_flag:write to create and dashboard:read to read', async () => {
    const reader = await newUser(t, { scopes: ['feature_flag:read'] });
    expectError(await t.api('POST', flagAction('dashboard'), {}, reader.key), 403);
    expectError(await t.api('POST', flagAction('enrich_usage_dashboard'), {}, reader.key), 403);
    expectError(await t.api('GET', dashboardPath(dashboardId), undefined, reader.key), 403);
    const viewer = await newUser(t, { scopes: ['dashboard:read'] });
    const res = await t.api('GET', dashboardPath(dashboardId), undefined, viewer.key);
    expect(res.status, res.text).toBe(200);
    expect(res.body.tiles).toHaveLength(4);
  });
});
