import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';

// Funnels (issue #10) over a crafted history: $pageview → signed_up → purchased, 14-day window,
// clock 2024-03-10 12:00 UTC. p1 starts as "a1" and is identified as "u1" (one person). p2's
// signup is exactly 14 days after its pageview (inside the window); p3's one second later.
const NOW = new Date('2024-03-10T12:00:00Z');
let t: TestService;
const ev = (event: string, distinctId: string, timestamp: string, properties = {}) => ({
  event,
  distinct_id: distinctId,
  timestamp,
  properties,
});
const STEPS = encodeURIComponent(
  JSON.stringify([
    { id: '$pageview', order: 0 },
    { id: 'signed_up', order: 1 },
    { id: 'purchased', order: 2 },
  ]),
);
const RANGE = 'date_from=2024-02-20&date_to=2024-03-10';

beforeAll(async () => {
  t = await startTestService({}, { now: () => NOW });
  const target = { url: t.url, projectApiKey: t.projectApiKey };
  await capture(target, [ev('$pageview', 'a1', '2024-03-01T10:00:00Z', { $browser: 'Chrome' })]);
  await capture(target, [
    ev('$identify', 'u1', '2024-03-01T10:05:00Z', {
      $anon_distinct_id: 'a1',
      $set: { email: 'p1@example.com' },
    }),
  ]);
  await capture(target, [
    ev('signed_up', 'u1', '2024-03-01T11:00:00Z'),
    ev('purchased', 'u1', '2024-03-05T10:00:00Z'),
    ev('$pageview', 'u2', '2024-02-21T10:00:00Z', { $browser: 'Firefox' }),
    ev('signed_up', 'u2', '2024-03-06T10:00:00Z'),
    ev('$pageview', 'u3', '2024-02-21T10:00:00Z', { $browser: 'Firefox' }),
    ev('signed_up', 'u3', '2024-03-06T10:00:01Z'),
    ev('signed_up', 'u4', '2024-03-02T09:00:00Z'),
    ev('$pageview', 'u4', '2024-03-02T10:00:00Z', { $browser: 'Chrome' }),
    ev('purchased', 'u4', '2024-03-02T11:00:00Z'),
    ev('$pageview', 'u5', '2024-03-03T10:00:00Z', { $browser: 'Chrome' }),
    ev('clicked', 'u5', '2024-03-03T10:30:00Z'),
    ev('signed_up', 'u5', '2024-03-03T11:00:00Z'),
  ]);
}, 120_000);
afterAll(async () => t?.close());

const counts = async (query: string) => {
  const res = await t.api('GET', `/api/projects/${t.projectId}/insights/funnel/?${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body.result as { count: number; name: string; breakdown_value?: string }[];
};
const persons = async (query: string, method = 'GET', body?: unknown) => {
  const res = await t.api(method, `/api/projects/${t.projectId}/persons/funnel/?${query}`, body);
  expect(res.status, res.text).toBe(200);
  return (res.body.results[0].people as { name: string }[]).map((p) => p.name).sort();
};

describe('insights/funnel', () => {
  it('counts persons per step in order, the window edge included', async () => {
    const steps = await counts(`events=${STEPS}&${RANGE}`);
    expect(steps.map((s) => [s.name, s.count])).toEqual([
      ['$pageview', 5],
      ['signed_up', 3], // u1 (merged with a1), u2 (exactly 14 days), u5; not u3 (14 days + 1 s)
      ['purchased', 1],
    ]);
  });

  it('takes relative dates', async () => {
    const steps = await counts(`events=${STEPS}&date_from=-19d`);
    expect(steps.map((s) => s.count)).toEqual([5, 3, 1]);
  });

  it('strict order allows no other event between steps', async () => {
    // u1's $identify and u5's "clicked" sit between their steps; u4 signed up first
    const steps = await counts(`events=${STEPS}&${RANGE}&funnel_order_type=strict`);
    expect(steps.map((s) => s.count)).toEqual([5, 1, 0]);
  });

  it('unordered takes the steps in any order', async () => {
    const steps = await counts(`events=${STEPS}&${RANGE}&funnel_order_type=unordered`);
    // u1 3, u2 2, u3 1, u4 3 (signed up, then pageview and purchase), u5 2
    expect(steps.map((s) => s.count)).toEqual([5, 4, 2]);
  });

  it('a shorter window drops the slow converters', async () => {
    const steps = await counts(
      `events=${STEPS}&${RANGE}&funnel_window_interval=2&funnel_window_interval_unit=hour`,
    );
    expect(steps.map((s) => s.count)).toEqual([5, 2, 0]); // u1 (1 h), u5 (1 h)
  });

  it('breaks down by the first step’s event property', async () => {
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/insights/funnel/?events=${STEPS}&${RANGE}&breakdown=$browser`,
    );
    expect(res.status, res.text).toBe(200);
    const groups = res.body.result as { breakdown_value: string; count: number }[][];
    expect(groups.map((g) => [g[0]!.breakdown_value, g.map((s) => s.count)])).toEqual([
      ['Chrome', [3, 2, 1]],
      ['Firefox', [2, 1, 0]],
    ]);
  });

  it('keeps breakdown_limit values (most step-1 persons first), the rest summed as "Other"', async () => {
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/insights/funnel/?events=${STEPS}&${RANGE}&breakdown=$browser&breakdown_limit=1`,
    );
    expect(res.status, res.text).toBe(200);
    const groups = res.body.result as { breakdown_value: string; count: number }[][];
    expect(groups.map((g) => [g[0]!.breakdown_value, g.map((s) => s.count)])).toEqual([
      ['Chrome', [3, 2, 1]],
      ['$$_posthog_breakdown_other_$$', [2, 1, 0]],
    ]);
  });

  it('breaks down by a person property (p1’s email, its anonymous pageview included)', async () => {
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/insights/funnel/?events=${STEPS}&${RANGE}&breakdown=email&breakdown_type=person`,
    );
    expect(res.status, res.text).toBe(200);
    const groups = res.body.result as { breakdown_value: string; count: number }[][];
    expect(groups.map((g) => [g[0]!.breakdown_value, g.map((s) => s.count)])).toEqual([
      ['', [4, 2, 0]],
      ['p1@example.com', [1, 1, 1]],
    ]);
  });
});

describe('persons/funnel', () => {
  it('lists who reached a step and who dropped off before it', async () => {
    expect(await persons(`events=${STEPS}&${RANGE}&funnel_step=2`)).toEqual([
      'p1@example.com',
      'u2',
      'u5',
    ]);
    expect(await persons(`events=${STEPS}&${RANGE}&funnel_step=-2`)).toEqual(['u3', 'u4']);
    expect(await persons(`events=${STEPS}&${RANGE}&funnel_step=3`)).toEqual(['p1@example.com']);
  });

  it('restricts to a breakdown value', async () => {
    expect(
      await persons(
        `events=${STEPS}&${RANGE}&breakdown=$browser&funnel_step_breakdown=Firefox&funnel_step=2`,
      ),
    ).toEqual(['u2']);
  });

  it('takes the filter as a POST body', async () => {
    const body = {
      events: [{ id: '$pageview' }, { id: 'signed_up' }, { id: 'purchased' }],
      date_from: '2024-02-20',
      date_to: '2024-03-10',
      funnel_step: -3,
    };
    expect(await persons('', 'POST', body)).toEqual(['u2', 'u5']);
  });

  it('refuses a step outside the funnel', async () => {
    for (const step of ['0', '-1', '4']) {
      const res = await t.api(
        'GET',
        `/api/projects/${t.projectId}/persons/funnel/?events=${STEPS}&${RANGE}&funnel_step=${step}`,
      );
      expect(res.status).toBe(400);
      expect(res.body.attr).toBe('funnel_step');
    }
  });
});
