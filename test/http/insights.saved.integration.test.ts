import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectError, followPages, newUser } from './helpers.ts';

// Saved insights and dashboards (issue #28). Clock: 2024-09-10 12:00 UTC; `-3d` by day is the four
// days Sep 7, 8, 9, 10. Pageviews: alice twice on Sep 8 (/home, then /pricing), bob once on Sep 9
// (/home) → totals [0, 2, 1, 0], unique users [0, 1, 1, 0]; alice signs up on Sep 9. So the funnel
// $pageview → signed_up is 2 then 1; daily retention of pageviews: Sep 8's cohort (alice) and Sep
// 9's (bob) never come back; the one path edge is /home → /pricing (alice). Counted by hand.
const NOW = new Date('2024-09-10T12:00:00Z');
let t: TestService;
const insights = () => `/api/projects/${t.projectId}/insights/`;
const dashboards = () => `/api/projects/${t.projectId}/dashboards/`;
const pageviews = (math = 'total') => ({
  insight: 'TRENDS',
  events: [{ id: '$pageview', type: 'events', math }],
  date_from: '-3d',
  interval: 'day',
});
const trendsQuery = (math = 'total') => ({
  kind: 'InsightVizNode',
  source: {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: '$pageview', math }],
    dateRange: { date_from: '-3d' },
    interval: 'day',
  },
});

const home = { $current_url: '/home' };
const head = () => t.service.stores.store.headPosition();

beforeAll(async () => {
  t = await startTestService({}, { now: () => NOW });
  await capture({ url: t.url, projectApiKey: t.projectApiKey }, [
    {
      event: '$pageview',
      distinct_id: 'alice',
      timestamp: '2024-09-08T09:00:00Z',
      properties: home,
    },
    {
      event: '$pageview',
      distinct_id: 'alice',
      timestamp: '2024-09-08T10:00:00Z',
      properties: { $current_url: '/pricing' },
    },
    { event: '$pageview', distinct_id: 'bob', timestamp: '2024-09-09T09:00:00Z', properties: home },
    { event: 'signed_up', distinct_id: 'alice', timestamp: '2024-09-09T09:00:00Z' },
  ]);
}, 120_000);
afterAll(async () => t?.close());

const create = async (body: Record<string, unknown>) => {
  const res = await t.api('POST', insights(), body);
  expect(res.status, res.text).toBe(201);
  return res.body;
};

describe('saved insights', () => {
  it('saves legacy filters, computes them on refresh and serves the cached result after', async () => {
    const created = await create({ name: 'Pageviews', filters: pageviews(), saved: true });
    expect(created).toMatchObject({
      name: 'Pageviews',
      filters: pageviews(),
      query: null,
      saved: true,
      favorited: false,
      deleted: false,
      dashboards: [],
      result: null,
      last_refresh: null,
      is_cached: false,
      created_by: { email: expect.any(String) },
    });
    expect(created.short_id).toMatch(/^[A-Za-z0-9]{8}$/);

    const before = await head();
    const refreshed = await t.api('GET', `${insights()}${created.id}/?refresh=true`);
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.body).toMatchObject({
      last_refresh: NOW.toISOString(),
      next_allowed_client_refresh: '2024-09-10T12:15:00.000Z',
      is_cached: false,
    });
    expect(refreshed.body.result.map((s: { data: number[] }) => s.data)).toEqual([[0, 2, 1, 0]]);
    // the result is the read side's cache, not a domain event: the log did not grow
    expect(await head()).toBe(before);

    const cached = await t.api('GET', `${insights()}${created.id}/`);
    expect(cached.body).toMatchObject({ last_refresh: NOW.toISOString(), is_cached: true });
    expect(cached.body.result).toEqual(refreshed.body.result);
    // blocking answers the cache until next_allowed_client_refresh (PostHog's 15 minutes)
    const blocking = await t.api('GET', `${insights()}${created.id}/?refresh=blocking`);
    expect(blocking.body).toMatchObject({ is_cached: true, result: refreshed.body.result });
    const listed = await t.api('GET', `${insights()}?short_id=${created.short_id}`);
    expect(listed.body.results[0]).toMatchObject({
      is_cached: true,
      result: refreshed.body.result,
    });

    // another series: the cached result is dropped until the next refresh
    const patched = await t.api('PATCH', `${insights()}${created.id}/`, {
      filters: pageviews('dau'),
    });
    expect(patched.body).toMatchObject({ result: null, last_refresh: null, is_cached: false });
    const again = await t.api('GET', `${insights()}${created.id}/?refresh=blocking`);
    expect(again.body).toMatchObject({ is_cached: false });
    expect(again.body.result[0].data).toEqual([0, 1, 1, 0]);
  });

  it('saves a TrendsQuery and computes it as the same legacy filters', async () => {
    const created = await create({ name: 'As a query', query: trendsQuery('dau') });
    expect(created).toMatchObject({ filters: {}, query: trendsQuery('dau') });
    const refreshed = await t.api('GET', `${insights()}${created.id}/?refresh=true`);
    expect(refreshed.body.result[0].data).toEqual([0, 1, 1, 0]);
  });

  it('refuses what does not map onto the insight engine with a 400 naming why', async () => {
    const funnel = { kind: 'InsightVizNode', source: { kind: 'FunnelsQuery', series: [] } };
    expectError(await t.api('POST', insights(), { query: funnel }), 400, { attr: 'query' });
    const actions = trendsQuery();
    actions.source.series = [{ kind: 'ActionsNode', id: 1 } as never];
    expectError(await t.api('POST', insights(), { query: actions }), 400, { attr: 'query' });
    const math = trendsQuery('sum');
    expectError(await t.api('POST', insights(), { query: math }), 400, { attr: 'query' });
    expectError(await t.api('POST', insights(), { filters: { insight: 'NOPE' } }), 400, {
      attr: 'filters',
    });
    expectError(await t.api('POST', insights(), { name: 'nothing' }), 400, { attr: 'filters' });
    const source = (kind: string, rest: Record<string, unknown>) => ({
      kind: 'InsightVizNode',
      source: { kind, ...rest },
    });
    const steps = [
      { kind: 'EventsNode', event: '$pageview' },
      { kind: 'EventsNode', event: 'signed_up' },
    ];
    for (const query of [
      source('FunnelsQuery', { series: steps, funnelsFilter: { exclusions: [{ id: 'x' }] } }),
      source('FunnelsQuery', { series: steps, funnelsFilter: { funnelVizType: 'trends' } }),
      source('RetentionQuery', { retentionFilter: { cumulative: true } }),
      source('PathsQuery', { pathsFilter: { pathGroupings: ['/blog/*'] } }),
      source('PathsQuery', { pathsFilter: { includeEventTypes: ['$pageview', '$screen'] } }),
    ])
      expectError(await t.api('POST', insights(), { query }), 400, { attr: 'query' });
    expectError(
      await t.api('POST', insights(), { filters: { insight: 'FUNNELS', events: [{ id: 'x' }] } }),
      400,
      { attr: 'events' },
    );
  });

  it('refreshes funnels, retention and paths, saved with filters or as a query', async () => {
    const range = { date_from: '-3d' };
    const kinds = [
      {
        filters: {
          insight: 'FUNNELS',
          events: [
            { id: '$pageview', type: 'events', order: 0 },
            { id: 'signed_up', type: 'events', order: 1 },
          ],
          ...range,
        },
        query: {
          kind: 'FunnelsQuery',
          series: [
            { kind: 'EventsNode', event: '$pageview' },
            { kind: 'EventsNode', event: 'signed_up' },
          ],
          dateRange: range,
          funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day' },
        },
        legacy: `insights/funnel/?events=${encodeURIComponent('[{"id":"$pageview"},{"id":"signed_up"}]')}&date_from=-3d`,
        shown: (r: any) => r.map((s: any) => [s.name, s.count]),
        expected: [
          ['$pageview', 2],
          ['signed_up', 1],
        ],
      },
      {
        filters: {
          insight: 'RETENTION',
          target_entity: { id: '$pageview', type: 'events' },
          period: 'Day',
          total_intervals: 4,
        },
        query: {
          kind: 'RetentionQuery',
          retentionFilter: {
            period: 'Day',
            totalIntervals: 4,
            targetEntity: { id: '$pageview', type: 'events' },
          },
        },
        legacy: 'insights/retention/?period=Day&total_intervals=4',
        shown: (r: any) => r.map((row: any) => [row.date, row.values.map((v: any) => v.count)]),
        expected: [
          ['2024-09-07T00:00:00Z', [0, 0, 0, 0]],
          ['2024-09-08T00:00:00Z', [1, 0, 0]],
          ['2024-09-09T00:00:00Z', [1, 0]],
          ['2024-09-10T00:00:00Z', [0]],
        ],
      },
      {
        filters: { insight: 'PATHS', include_event_types: ['$pageview'], ...range },
        query: {
          kind: 'PathsQuery',
          pathsFilter: { includeEventTypes: ['$pageview'] },
          dateRange: range,
        },
        legacy: 'insights/path/?date_from=-3d',
        shown: (r: any) => r,
        expected: [{ source: '1_/home', target: '2_/pricing', value: 1 }],
      },
    ];
    for (const kind of kinds) {
      const asFilters = await create({ filters: kind.filters });
      const asQuery = await create({ query: { kind: 'InsightVizNode', source: kind.query } });
      const legacy = await t.api('GET', `/api/projects/${t.projectId}/${kind.legacy}`);
      expect(legacy.status, legacy.text).toBe(200);
      for (const insight of [asFilters, asQuery]) {
        const before = await head();
        const res = await t.api('GET', `${insights()}${insight.id}/?refresh=true`);
        expect(res.status, res.text).toBe(200);
        expect(kind.shown(res.body.result)).toEqual(kind.expected);
        // the same result, in the same shape, as the legacy endpoint of its kind answers
        expect(res.body.result).toEqual(legacy.body.result);
        expect(await head()).toBe(before);
        const cached = await t.api('GET', `${insights()}${insight.id}/`);
        expect(cached.body).toMatchObject({ is_cached: true, last_refresh: NOW.toISOString() });
        expect(cached.body.result).toEqual(res.body.result);
      }
    }
  });

  it('lists with paging, short_id, saved and favorited, and soft-deletes', async () => {
    const a = await create({ name: 'A', filters: pageviews(), favorited: true });
    const b = await create({ name: 'B', filters: pageviews() });
    const pages = await followPages(t, `${insights()}?limit=2`);
    const all = pages.flatMap((p) => p.results);
    expect(all.length).toBe(pages[0].count);
    expect(new Set(all.map((i: { id: number }) => i.id)).size).toBe(all.length);
    expect(pages[0].results.length).toBe(2);

    const byShortId = await t.api('GET', `${insights()}?short_id=${b.short_id}`);
    expect(byShortId.body.results.map((i: { id: number }) => i.id)).toEqual([b.id]);
    const favorited = await t.api('GET', `${insights()}?favorited=true`);
    expect(favorited.body.results.map((i: { id: number }) => i.id)).toEqual([a.id]);
    const saved = await t.api('GET', `${insights()}?saved=true`);
    expect(saved.body.results.map((i: { name: string }) => i.name)).toContain('Pageviews');
    expect(saved.body.results.map((i: { id: number }) => i.id)).not.toContain(b.id);

    expect((await t.api('DELETE', `${insights()}${b.id}/`)).status).toBe(405);
    const deleted = await t.api('PATCH', `${insights()}${b.id}/`, { deleted: true });
    expect(deleted.body.deleted).toBe(true);
    expect((await t.api('GET', `${insights()}${b.id}/`)).status).toBe(404);
    expect((await t.api('GET', `${insights()}?short_id=${b.short_id}`)).body.count).toBe(0);
    const restored = await t.api('PATCH', `${insights()}${b.id}/`, { deleted: false });
    expect(restored.body.deleted).toBe(false);

    const activity = await t.api('GET', `${insights()}${b.id}/activity/`);
    expect(activity.status, activity.text).toBe(200);
    expect(activity.body.results.map((e: { activity: string }) => e.activity)).toEqual([
      'updated',
      'deleted',
      'created',
    ]);
  });

  it('answers the Airbyte connector’s insights?limit=100 with next until the end', async () => {
    const res = await t.api('GET', `${insights()}?limit=100`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ count: expect.any(Number), next: null });
    expect(res.body.results.length).toBe(res.body.count);
  });

  it('enforces insight scopes', async () => {
    const reader = await newUser(t, { scopes: ['insight:read'] });
    expect((await t.api('GET', insights(), undefined, reader.key)).status).toBe(200);
    expectError(await t.api('POST', insights(), { filters: pageviews() }, reader.key), 403);
  });
});

describe('dashboards', () => {
  it('puts an insight on several dashboards, moves it, and drops tiles of a deleted dashboard', async () => {
    const one = await t.api('POST', dashboards(), { name: 'One' });
    expect(one.status, one.text).toBe(201);
    expect(one.body).toMatchObject({ name: 'One', pinned: false, deleted: false, tiles: [] });
    const two = (await t.api('POST', dashboards(), { name: 'Two', pinned: true })).body;

    const insight = await create({
      name: 'Tiled',
      filters: pageviews(),
      dashboards: [one.body.id, two.id],
    });
    expect(insight.dashboards).toEqual([one.body.id, two.id]);
    const tiled = await t.api('GET', `${dashboards()}${one.body.id}/`);
    expect(tiled.body.tiles.map((x: any) => x.insight.short_id)).toEqual([insight.short_id]);
    expect(tiled.body.tiles[0].id).toBe(insight.dashboard_tiles[0].id);

    const moved = await t.api('PATCH', `${insights()}${insight.id}/`, { dashboards: [two.id] });
    expect(moved.body.dashboards).toEqual([two.id]);
    expect((await t.api('GET', `${dashboards()}${one.body.id}/`)).body.tiles).toEqual([]);
    const listed = await t.api('GET', `${insights()}?saved=true`);
    expect(listed.body.results.map((i: { id: number }) => i.id)).toContain(insight.id);

    expectError(
      await t.api('PATCH', `${insights()}${insight.id}/`, { dashboards: [999_999] }),
      400,
      { attr: 'dashboards' },
    );

    const list = await t.api('GET', dashboards());
    expect(list.body.results.map((d: { name: string }) => d.name)).toEqual(
      expect.arrayContaining(['One', 'Two']),
    );
    expect(list.body.results[0].name).toBe('Two'); // pinned first

    const renamed = await t.api('PATCH', `${dashboards()}${two.id}/`, { name: 'Two!' });
    expect(renamed.body.name).toBe('Two!');
    const gone = await t.api('PATCH', `${dashboards()}${two.id}/`, { deleted: true });
    expect(gone.body.deleted).toBe(true);
    expect((await t.api('GET', `${dashboards()}${two.id}/`)).status).toBe(404);
    expect((await t.api('GET', `${insights()}${insight.id}/`)).body.dashboards).toEqual([]);
    expect((await t.api('DELETE', `${dashboards()}${one.body.id}/`)).status).toBe(405);
  });

  it('enforces dashboard scopes', async () => {
    const reader = await newUser(t, { scopes: ['dashboard:read'] });
    expect((await t.api('GET', dashboards(), undefined, reader.key)).status).toBe(200);
    expectError(await t.api('POST', dashboards(), { name: 'x' }, reader.key), 403);
  });
});
