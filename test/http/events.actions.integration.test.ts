import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectValidation, newProject } from './helpers.ts';

/**
 * `action_id` on the events list (issue #28): the events matching any step of the action, with
 * PostHog's step semantics (posthog/hogql/property.py action_to_expr). Expectations are written
 * from the fixtures below, by name.
 */
let t: TestService;
const names = new Map<string, string>(); // event uuid → fixture name

const buyClick = [
  { tag_name: 'span', $el_text: 'Buy now', nth_child: 1, nth_of_type: 1 },
  {
    tag_name: 'button',
    attr__class: 'btn btn-primary',
    attr__id: 'buy',
    nth_child: 2,
    nth_of_type: 1,
  },
  { tag_name: 'form', attr__class: 'checkout', nth_child: 1, nth_of_type: 1 },
];
const docsClick = [
  { tag_name: 'a', $el_text: 'Read the Docs', attr__href: '/docs/start', nth_child: 3 },
  { tag_name: 'nav', nth_child: 1, nth_of_type: 1 },
];
const fixtures = [
  { name: 'pricing', event: '$pageview', props: { $current_url: 'https://shop.com/pricing?x=1' } },
  { name: 'Pricing', event: '$pageview', props: { $current_url: 'https://shop.com/Pricing' } },
  { name: 'about', event: '$pageview', props: { $current_url: 'https://shop.com/about' } },
  { name: 'percent', event: '$pageview', props: { $current_url: 'https://shop.com/100%_off' } },
  { name: 'pro', event: 'signed_up', props: { plan: 'pro' } },
  { name: 'free', event: 'signed_up', props: { plan: 'free' } },
  { name: 'buy', event: '$autocapture', props: { $event_type: 'click', $elements: buyClick } },
  { name: 'docs', event: '$autocapture', props: { $event_type: 'click', $elements: docsClick } },
  // the same page as `docs`, but not an autocapture: element conditions never match it
  { name: 'docsView', event: 'docs_viewed', props: { $current_url: 'https://shop.com/docs' } },
];

beforeAll(async () => {
  t = await startTestService();
  await capture(
    t,
    fixtures.map((f, i) => {
      const uuid = `018e0000-0000-7000-8000-${String(i).padStart(12, '0')}`;
      names.set(uuid, f.name);
      return {
        event: f.event,
        distinct_id: `user-${i}`,
        uuid,
        timestamp: `2026-01-01T00:00:0${i}.000Z`,
        properties: f.props,
      };
    }),
  );
});
afterAll(async () => t?.close());

const actionsPath = () => `/api/projects/${t.projectId}/actions/`;
async function matching(steps: unknown[], projectId = t.projectId): Promise<string[]> {
  const made = await t.api('POST', `/api/projects/${projectId}/actions/`, {
    name: `a-${Math.random()}`,
    steps,
  });
  expect(made.status, made.text).toBe(201);
  return eventsOf(made.body.id);
}
async function eventsOf(actionId: number | string): Promise<string[]> {
  const res = await t.api(
    'GET',
    `/api/projects/${t.projectId}/events/?action_id=${actionId}&orderBy=["timestamp"]`,
  );
  expect(res.status, res.text).toBe(200);
  return res.body.results.map((e: { id: string }) => names.get(e.id));
}

describe('events matching an action', () => {
  it('matches the URL as contains (case-sensitive, literal), exact or regex', async () => {
    expect(await matching([{ event: '$pageview', url: '/pricing' }])).toEqual(['pricing']);
    expect(await matching([{ url: '/100%_off' }])).toEqual(['percent']);
    expect(await matching([{ url: 'https://shop.com/about', url_matching: 'exact' }])).toEqual([
      'about',
    ]);
    expect(
      await matching([{ url: '^https://shop\\.com/[Pp]ricing($|\\?)', url_matching: 'regex' }]),
    ).toEqual(['pricing', 'Pricing']);
  });

  it('ORs the steps and ANDs a step with its property filters', async () => {
    expect(
      await matching([
        { event: '$pageview', url: 'about' },
        {
          event: 'signed_up',
          properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }],
        },
      ]),
    ).toEqual(['about', 'pro']);
    expect(await matching([{ event: 'signed_up' }])).toEqual(['pro', 'free']);
  });

  it('matches autocapture clicks by selector, tag, text and href', async () => {
    expect(await matching([{ event: '$autocapture', selector: 'button#buy > span' }])).toEqual([
      'buy',
    ]);
    expect(await matching([{ event: '$autocapture', selector: 'form .btn' }])).toEqual(['buy']);
    expect(await matching([{ event: '$autocapture', selector: 'nav > button' }])).toEqual([]);
    expect(await matching([{ event: '$autocapture', tag_name: 'a' }])).toEqual(['docs']);
    expect(await matching([{ event: '$autocapture', text: 'Buy now' }])).toEqual(['buy']);
    expect(await matching([{ event: '$autocapture', text: 'buy' }])).toEqual([]);
    expect(
      await matching([{ event: '$autocapture', text: 'the docs', text_matching: 'contains' }]),
    ).toEqual(['docs']);
    expect(
      await matching([{ event: '$autocapture', href: '^/docs/', href_matching: 'regex' }]),
    ).toEqual([]);
    expect(
      await matching([{ event: '$autocapture', href: '/docs/.*', href_matching: 'regex' }]),
    ).toEqual(['docs']);
    // element conditions belong to $autocapture steps only (PostHog ignores them elsewhere)
    expect(await matching([{ event: 'docs_viewed', tag_name: 'a' }])).toEqual(['docsView']);
  });

  it('resolves person property filters of a step against the persons read model', async () => {
    const vip = '018e0000-0000-7000-8000-0000000000a1';
    const regular = '018e0000-0000-7000-8000-0000000000a2';
    names.set(vip, 'vip').set(regular, 'regular');
    await capture(t, [
      {
        event: 'renewed',
        uuid: vip,
        distinct_id: 'vip',
        timestamp: '2026-01-01T03:00:00.000Z',
        properties: { $set: { tier: 'gold' } },
      },
      {
        event: 'renewed',
        uuid: regular,
        distinct_id: 'regular',
        timestamp: '2026-01-01T03:00:01.000Z',
      },
    ]);
    const gold = [{ key: 'tier', value: 'gold', operator: 'exact', type: 'person' }];
    expect(await matching([{ event: 'renewed', properties: gold }])).toEqual(['vip']);
    expect(
      await matching([{ event: 'renewed', properties: [{ ...gold[0], operator: 'is_not' }] }]),
    ).toEqual(['regular']);
    const { id } = (
      await t.api('POST', actionsPath(), {
        name: 'Gold renewal',
        steps: [{ event: 'renewed', properties: gold }],
      })
    ).body;
    const actions = encodeURIComponent(JSON.stringify([{ id }]));
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/insights/trend/?actions=${actions}&date_from=2025-12-31&date_to=2026-01-02&interval=day`,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.result[0].data).toEqual([0, 1, 0]);
  });

  it("matches nothing for an action without steps, another project's action, or none", async () => {
    expect(await matching([])).toEqual([]);
    const other = await newProject(t);
    const theirs = await t.api('POST', `/api/projects/${other}/actions/`, {
      name: 'theirs',
      steps: [{ event: 'signed_up' }],
    });
    expect(await eventsOf(theirs.body.id)).toEqual([]);
    expect(await eventsOf(424242)).toEqual([]);
    // PostHog stores any selector; one this server cannot read is a 400 naming the step
    const hover = await t.api('POST', actionsPath(), {
      name: 'hover',
      steps: [{ event: 'signed_up' }, { event: '$autocapture', selector: 'a:hover' }],
    });
    expect(hover.status, hover.text).toBe(201);
    const refused = await t.api(
      'GET',
      `/api/projects/${t.projectId}/events/?action_id=${hover.body.id}`,
    );
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.detail).toMatch(/^action step 2: selector/);
    expectValidation(await t.api('GET', `${actionsPath()}?limit=0`), 'limit');
  });
});

describe('actions as insight series', () => {
  const trend = async (query: string) => {
    const res = await t.api('GET', `/api/projects/${t.projectId}/insights/trend/?${query}`);
    expect(res.status, res.text).toBe(200);
    return res.body.result as { action: unknown; label: string; data: number[]; count: number }[];
  };
  const days = 'date_from=2025-12-31&date_to=2026-01-02&interval=day';

  it('counts the events matching any step, beside event series, in order', async () => {
    const { id } = (
      await t.api('POST', actionsPath(), {
        name: 'Engaged',
        steps: [{ event: '$pageview', url: 'about' }, { event: 'signed_up' }],
      })
    ).body;
    const actions = encodeURIComponent(JSON.stringify([{ id, type: 'actions', order: 0 }]));
    const events = encodeURIComponent(JSON.stringify([{ id: '$pageview', order: 1 }]));
    const result = await trend(`actions=${actions}&events=${events}&${days}`);
    expect(result.map((s) => [s.label, s.data, s.count])).toEqual([
      ['Engaged', [0, 3, 0], 3],
      ['$pageview', [0, 4, 0], 4],
    ]);
    expect(result[0]!.action).toEqual({
      id,
      type: 'actions',
      name: 'Engaged',
      order: 0,
      math: 'total',
    });
    // the persons behind the point: the three users whose events match
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/persons/trends/?actions=${actions}&entity_type=actions&entity_id=${id}&date_from=2026-01-01&interval=day`,
    );
    expect(res.status, res.text).toBe(200);
    const ids = res.body.results[0].people.flatMap(
      (p: { distinct_ids: string[] }) => p.distinct_ids,
    );
    expect(ids.sort()).toEqual(['user-2', 'user-4', 'user-5']);
  });

  it('takes an action as a funnel step', async () => {
    await capture(t, [
      {
        event: '$pageview',
        distinct_id: 'funnel-user',
        timestamp: '2026-01-01T01:00:00.000Z',
        properties: { $current_url: 'https://shop.com/pricing' },
      },
      { event: 'signed_up', distinct_id: 'funnel-user', timestamp: '2026-01-01T01:05:00.000Z' },
    ]);
    const { id } = (
      await t.api('POST', actionsPath(), {
        name: 'Pricing page',
        steps: [{ event: '$pageview', url: '/pricing' }],
      })
    ).body;
    const actions = encodeURIComponent(JSON.stringify([{ id, name: 'Pricing page', order: 0 }]));
    const events = encodeURIComponent(JSON.stringify([{ id: 'signed_up', order: 1 }]));
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/insights/funnel/?actions=${actions}&events=${events}&${days}`,
    );
    expect(res.status, res.text).toBe(200);
    // step 1: user-0 and funnel-user saw /pricing; step 2: only funnel-user signed up after it
    expect(res.body.result).toEqual([
      { action_id: id, name: 'Pricing page', order: 0, type: 'actions', count: 2 },
      { action_id: 'signed_up', name: 'signed_up', order: 1, type: 'events', count: 1 },
    ]);
  });

  it("refuses another project's action in a trend or a funnel", async () => {
    const other = await newProject(t);
    const { id } = (await t.api('POST', `/api/projects/${other}/actions/`, { name: 'x' })).body;
    const actions = encodeURIComponent(JSON.stringify([{ id }]));
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/insights/trend/?actions=${actions}&${days}`,
    );
    expectValidation(res, 'actions');
    const funnel = await t.api(
      'GET',
      `/api/projects/${t.projectId}/insights/funnel/?actions=${actions}&events=${encodeURIComponent('[{"id":"a"}]')}&${days}`,
    );
    expectValidation(funnel, 'actions');
  });
});
