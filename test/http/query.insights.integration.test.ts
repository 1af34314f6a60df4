import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectError } from './helpers.ts';

// Insight query kinds on /query (issue #29) against the legacy insight endpoints, same question,
// same seeded events. Clock: 2024-09-10 12:00 UTC; `-3d` by day is Sep 7, 8, 9, 10.
// $pageview: alice (Chrome) Sep 8 09:00 /home, Sep 8 10:00 /pricing, Sep 9 11:00 /home; bob
// (Firefox) Sep 9 09:00 /home; carol (Chrome) Sep 10 08:00 /home. alice signs up Sep 9 09:00.
// Counted by hand: totals [0, 2, 2, 1], unique users [0, 1, 2, 1]; by browser Chrome [0, 2, 1, 1]
// and Firefox [0, 0, 1, 0]; pageviews of /home [0, 1, 2, 1]; stickiness (days active of 4) alice
// 2, bob 1, carol 1 → [2, 1, 0, 0]; on Sep 10 alice and bob, active Sep 9, are dormant (-2); the
// funnel $pageview → signed_up is 3 then 1 (alice); daily retention of pageviews from Sep 8: Sep
// 8's cohort (alice) 1 then 1 (Sep 9) then 0, Sep 9's (alice, bob) 2 then 0, Sep 10's (carol) 1;
// the path /home → /pricing is walked once (alice).
const NOW = new Date('2024-09-10T12:00:00Z');
let t: TestService;
let actionId: number;
const project = () => `/api/projects/${t.projectId}`;
const pv = (who: string, at: string, url: string, $browser: string) => ({
  event: '$pageview',
  distinct_id: who,
  timestamp: at,
  properties: { $current_url: url, $browser },
});

beforeAll(async () => {
  t = await startTestService({}, { now: () => NOW });
  await capture({ url: t.url, projectApiKey: t.projectApiKey }, [
    pv('alice', '2024-09-08T09:00:00Z', '/home', 'Chrome'),
    pv('alice', '2024-09-08T10:00:00Z', '/pricing', 'Chrome'),
    pv('alice', '2024-09-09T11:00:00Z', '/home', 'Chrome'),
    pv('bob', '2024-09-09T09:00:00Z', '/home', 'Firefox'),
    pv('carol', '2024-09-10T08:00:00Z', '/home', 'Chrome'),
    { event: 'signed_up', distinct_id: 'alice', timestamp: '2024-09-09T09:00:00Z' },
  ]);
  const action = await t.api('POST', `${project()}/actions/`, {
    name: 'Viewed home',
    steps: [{ event: '$pageview', url: '/home', url_matching: 'exact' }],
  });
  expect(action.status, action.text).toBe(201);
  actionId = action.body.id;
}, 120_000);
afterAll(async () => t?.close());

/** POST /query/ with an insight query (in an InsightVizNode, as PostHog's app sends it). */
async function ask(source: Record<string, unknown>, status = 200) {
  const res = await t.api('POST', `${project()}/query/`, {
    query: { kind: 'InsightVizNode', source },
  });
  expect(res.status, res.text).toBe(status);
  return res.body;
}
/** GET a legacy insight endpoint with these parameters (lists and objects as JSON). */
async function legacy(path: string, params: Record<string, unknown>) {
  const query = new URLSearchParams(
    Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  );
  const res = await t.api('GET', `${project()}/insights/${path}/?${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body.result as unknown[];
}
const events = (event: string, math = 'total') => ({ kind: 'EventsNode', event, math });
const days = { dateRange: { date_from: '-3d' }, interval: 'day' };
const data = (results: unknown) => (results as { data: number[] }[]).map((s) => s.data);

describe('insight queries on /query', () => {
  it('TrendsQuery: totals and unique users as insights/trend/ answers them, in PostHog’s envelope', async () => {
    const body = await ask({
      kind: 'TrendsQuery',
      series: [events('$pageview'), events('$pageview', 'dau')],
      ...days,
    });
    expect(data(body.results)).toEqual([
      [0, 2, 2, 1],
      [0, 1, 2, 1],
    ]);
    expect(body).toMatchObject({
      is_cached: false,
      last_refresh: NOW.toISOString(),
      next_allowed_client_refresh: expect.any(String),
      cache_key: expect.any(String),
      timezone: 'UTC',
      timings: [expect.objectContaining({ k: expect.any(String), t: expect.any(Number) })],
    });
    const same = await legacy('trend', {
      events: [
        { id: '$pageview', type: 'events', math: 'total', order: 0 },
        { id: '$pageview', type: 'events', math: 'dau', order: 1 },
      ],
      date_from: '-3d',
      interval: 'day',
    });
    expect(body.results).toEqual(same);
  });

  it('TrendsQuery: a breakdown (also as a one-item breakdowns list) and an ActionsNode series', async () => {
    const byBrowser = await ask({
      kind: 'TrendsQuery',
      series: [events('$pageview')],
      breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
      ...days,
    });
    expect(
      (byBrowser.results as { breakdown_value: string; data: number[] }[]).map((s) => [
        s.breakdown_value,
        s.data,
      ]),
    ).toEqual([
      ['Chrome', [0, 2, 1, 1]],
      ['Firefox', [0, 0, 1, 0]],
    ]);
    const asList = await ask({
      kind: 'TrendsQuery',
      series: [events('$pageview')],
      breakdownFilter: { breakdowns: [{ property: '$browser', type: 'event' }] },
      ...days,
    });
    expect(asList.results).toEqual(byBrowser.results);
    expect(byBrowser.results).toEqual(
      await legacy('trend', {
        events: [{ id: '$pageview', type: 'events' }],
        breakdown: '$browser',
        date_from: '-3d',
        interval: 'day',
      }),
    );

    const action = await ask({
      kind: 'TrendsQuery',
      series: [{ kind: 'ActionsNode', id: actionId, name: 'Viewed home' }],
      ...days,
    });
    expect(data(action.results)).toEqual([[0, 1, 2, 1]]);
    expect(action.results).toEqual(
      await legacy('trend', {
        actions: [{ id: actionId, type: 'actions', name: 'Viewed home' }],
        date_from: '-3d',
        interval: 'day',
      }),
    );
  });

  it('StickinessQuery and LifecycleQuery as insights/trend/ shows them', async () => {
    const sticky = await ask({ kind: 'StickinessQuery', series: [events('$pageview')], ...days });
    expect(data(sticky.results)).toEqual([[2, 1, 0, 0]]);
    const params = { events: [{ id: '$pageview' }], date_from: '-3d', interval: 'day' };
    expect(sticky.results).toEqual(await legacy('trend', { ...params, shown_as: 'Stickiness' }));

    const lifecycle = await ask({ kind: 'LifecycleQuery', series: [events('$pageview')], ...days });
    const dormant = (lifecycle.results as { status: string; data: number[] }[]).find(
      (s) => s.status === 'dormant',
    );
    expect(dormant?.data.at(-1)).toBe(-2);
    expect(lifecycle.results).toEqual(await legacy('trend', { ...params, shown_as: 'Lifecycle' }));
  });

  it('FunnelsQuery as insights/funnel/ answers it', async () => {
    const body = await ask({
      kind: 'FunnelsQuery',
      series: [events('$pageview'), events('signed_up')],
      dateRange: { date_from: '-3d' },
    });
    expect((body.results as { count: number }[]).map((s) => s.count)).toEqual([3, 1]);
    expect(body.results).toEqual(
      await legacy('funnel', {
        events: [
          { id: '$pageview', order: 0 },
          { id: 'signed_up', order: 1 },
        ],
        date_from: '-3d',
      }),
    );
    // an action as a step: everyone viewed /home, alice signed up after
    const withAction = await ask({
      kind: 'FunnelsQuery',
      series: [{ kind: 'ActionsNode', id: actionId }, events('signed_up')],
      dateRange: { date_from: '-3d' },
    });
    expect((withAction.results as { count: number }[]).map((s) => s.count)).toEqual([3, 1]);
    expect(withAction.results).toEqual(
      await legacy('funnel', {
        actions: [{ id: actionId, type: 'actions', order: 0 }],
        events: [{ id: 'signed_up', order: 1 }],
        date_from: '-3d',
      }),
    );
  });

  it('RetentionQuery as insights/retention/ answers it', async () => {
    const body = await ask({
      kind: 'RetentionQuery',
      dateRange: { date_to: '2024-09-10' },
      retentionFilter: {
        period: 'Day',
        totalIntervals: 3,
        targetEntity: { id: '$pageview', type: 'events' },
        returningEntity: { id: '$pageview', type: 'events' },
      },
    });
    const counts = (body.results as { values: { count: number }[] }[]).map((r) =>
      r.values.map((v) => v.count),
    );
    expect(counts).toEqual([[1, 1, 0], [2, 0], [1]]);
    expect(body.results).toEqual(
      await legacy('retention', {
        date_to: '2024-09-10',
        period: 'Day',
        total_intervals: '3',
        target_entity: { id: '$pageview', type: 'events' },
        returning_entity: { id: '$pageview', type: 'events' },
      }),
    );
  });

  it('PathsQuery as insights/path/ answers it', async () => {
    const body = await ask({
      kind: 'PathsQuery',
      dateRange: { date_from: '-3d' },
      pathsFilter: { includeEventTypes: ['$pageview'] },
    });
    expect(body.results).toContainEqual(
      expect.objectContaining({ source: '1_/home', target: '2_/pricing', value: 1 }),
    );
    expect(body.results).toEqual(
      await legacy('path', { date_from: '-3d', path_type: '$pageview' }),
    );
  });

  it('a bare TrendsQuery (no InsightVizNode) is answered too; styling and test accounts change nothing', async () => {
    const res = await t.api('POST', `${project()}/query/`, {
      query: { kind: 'TrendsQuery', series: [events('$pageview')], ...days },
    });
    expect(res.status, res.text).toBe(200);
    expect(data(res.body.results)).toEqual([[0, 2, 2, 1]]);
    // no test account filters exist here: PostHog computes the same for a project without any
    const styled = await ask({
      kind: 'TrendsQuery',
      series: [events('$pageview')],
      ...days,
      filterTestAccounts: true,
      trendsFilter: { display: 'ActionsBar', showLegend: true },
    });
    expect(styled.results).toEqual(res.body.results);
  });

  it('refuses what the engine does not compute with a 400 naming the field', async () => {
    const trends = { kind: 'TrendsQuery', series: [events('$pageview')], ...days };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...trends, series: [{ ...events('$pageview'), math: 'sum' }] }, 'series[0].math'],
      [{ ...trends, compareFilter: { compare: true } }, 'compareFilter.compare'],
      [{ ...trends, trendsFilter: { formula: 'A*2' } }, 'trendsFilter.formula'],
      [{ ...trends, trendsFilter: { display: 'BoldNumber' } }, 'trendsFilter.display'],
      [
        {
          ...trends,
          breakdownFilter: {
            breakdowns: [{ property: '$browser' }, { property: '$os' }],
          },
        },
        'breakdownFilter.breakdowns',
      ],
      [
        { ...trends, breakdownFilter: { breakdown: 'x', breakdown_type: 'group' } },
        'breakdown_type',
      ],
      [
        { ...trends, kind: 'StickinessQuery', stickinessFilter: { computedAs: 'cumulative' } },
        'computedAs',
      ],
      [
        {
          kind: 'FunnelsQuery',
          series: [events('$pageview'), events('signed_up')],
          funnelsFilter: { funnelVizType: 'trends' },
        },
        'funnelsFilter.funnelVizType',
      ],
      [{ kind: 'RetentionQuery', retentionFilter: { cumulative: true } }, 'cumulative'],
      [{ kind: 'PathsQuery', pathsFilter: { excludeEvents: ['/x'] } }, 'excludeEvents'],
    ];
    for (const [source, field] of cases) {
      const res = await t.api('POST', `${project()}/query/`, {
        query: { kind: 'InsightVizNode', source },
      });
      expect(res.status, `${field}: ${res.text}`).toBe(400);
      expectError(res, 400, { type: 'validation_error' });
      expect(res.body.detail, JSON.stringify(source)).toContain(field);
    }
    // an action of no project: the engine's own 400
    const unknown = await t.api('POST', `${project()}/query/`, {
      query: { kind: 'TrendsQuery', series: [{ kind: 'ActionsNode', id: 987654 }] },
    });
    expectError(unknown, 400, { type: 'validation_error' });
  });
});
