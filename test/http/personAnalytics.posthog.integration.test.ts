import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { newUser } from './helpers.ts';

// Issue #28: five person-analytics answers as PostHog gives them (read from its code; see
// docs/DECISIONS.md "Person analytics as PostHog answers it"). Each block has its own persons and
// events, so the expectations below are counted by hand from this seed. Clock 2024-05-10 12:00 UTC.
const NOW = new Date('2024-05-10T12:00:00Z');
let t: TestService;
const ev = (event: string, distinctId: string, timestamp: string, properties = {}) => ({
  event,
  distinct_id: distinctId,
  timestamp,
  properties,
});
const q = (v: unknown) => encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));
const path = (rest: string) => `/api/projects/${t.projectId}/${rest}`;
const names = (people: { name: string }[]) => people.map((p) => p.name).sort();

beforeAll(async () => {
  t = await startTestService({}, { now: () => NOW });
  const target = { url: t.url, projectApiKey: t.projectApiKey };
  await capture(target, [
    // retention ($pageview), days May 1–3: p4 every day, p1 day 1 and 2, p2 day 1 and 3, p3 day
    // 1 only, p5 day 2 only
    ...['p1', 'p2', 'p3', 'p4'].map((p) => ev('$pageview', p, '2024-05-01T10:00:00Z')),
    ev('$pageview', 'p1', '2024-05-02T10:00:00Z'),
    ev('$pageview', 'p4', '2024-05-02T10:00:00Z'),
    ev('$pageview', 'p5', '2024-05-02T10:00:00Z'),
    ev('$pageview', 'p2', '2024-05-03T10:00:00Z'),
    ev('$pageview', 'p4', '2024-05-03T10:00:00Z'),
    // funnel signup → paid by utm: f1 (ads) and f2 (seo) paid, f3 (ads) did not
    ev('signup', 'f1', '2024-05-04T10:00:00Z', { utm: 'ads' }),
    ev('paid', 'f1', '2024-05-04T11:00:00Z'),
    ev('signup', 'f2', '2024-05-04T10:00:00Z', { utm: 'seo' }),
    ev('paid', 'f2', '2024-05-04T11:00:00Z'),
    ev('signup', 'f3', '2024-05-05T10:00:00Z', { utm: 'ads' }),
    // correlation visit → buy, window 1 day: k1 chats between its steps, k2 only before its first
    // and after its last step; k3 never chats; k4 (dropped off) chats within the window, k5 two
    // days after its visit (outside the window)
    ev('visit', 'k1', '2024-05-06T10:00:00Z'),
    ev('chat', 'k1', '2024-05-06T10:30:00Z'),
    ev('buy', 'k1', '2024-05-06T11:00:00Z'),
    ev('chat', 'k2', '2024-05-06T09:00:00Z'),
    ev('visit', 'k2', '2024-05-06T10:00:00Z'),
    ev('buy', 'k2', '2024-05-06T11:00:00Z'),
    ev('chat', 'k2', '2024-05-06T12:00:00Z'),
    ev('visit', 'k3', '2024-05-06T10:00:00Z'),
    ev('buy', 'k3', '2024-05-06T11:00:00Z'),
    ev('visit', 'k4', '2024-05-06T10:00:00Z'),
    ev('chat', 'k4', '2024-05-06T10:30:00Z'),
    ev('visit', 'k5', '2024-05-06T10:00:00Z'),
    ev('chat', 'k5', '2024-05-08T10:00:00Z'),
    // cohorts: c1 and c2 on pro, c3 on free; c1 purchased twice, c3 once
    ev('$set', 'c1', '2024-05-01T00:00:00Z', { $set: { plan: 'pro' } }),
    ev('$set', 'c2', '2024-05-01T00:00:00Z', { $set: { plan: 'pro' } }),
    ev('$set', 'c3', '2024-05-01T00:00:00Z', { $set: { plan: 'free' } }),
    ev('purchased', 'c1', '2024-05-05T10:00:00Z'),
    ev('purchased', 'c1', '2024-05-06T10:00:00Z'),
    ev('purchased', 'c3', '2024-05-07T10:00:00Z'),
  ]);
}, 120_000);
afterAll(async () => t?.close());

describe('persons/retention/?display=ActionsTable', () => {
  type Row = { person: { name: string }; appearances: number[] };
  const table = async (query: string) => {
    const res = await t.api(
      'GET',
      path(`persons/retention/?total_intervals=3&date_to=2024-05-03&display=ActionsTable&${query}`),
    );
    expect(res.status, res.text).toBe(200);
    return res.body as { result: Row[]; next: string | null };
  };
  const rows = (r: { result: Row[] }) => r.result.map((x) => [x.person.name, x.appearances]);

  it('lists the cohort’s persons with the intervals they came back in, most first', async () => {
    const day0 = await table('selected_interval=0');
    const got = rows(day0);
    expect(got[0]).toEqual(['p4', [1, 1, 1]]);
    expect(got.slice(1, 3).sort()).toEqual([
      ['p1', [1, 1, 0]],
      ['p2', [1, 0, 1]],
    ]);
    expect(got[3]).toEqual(['p3', [1, 0, 0]]);
    expect(got).toHaveLength(4);
    expect(day0.next).toBeNull();
  });

  it('a later cohort: appearances as long as the rest of the table; PostHog’s own link form', async () => {
    const day1 = rows(await table('selected_interval=1'));
    expect(day1[0]).toEqual(['p4', [1, 1]]);
    expect(day1.slice(1).sort()).toEqual([
      ['p1', [1, 0]],
      ['p5', [1, 0]],
    ]);
    // the table's people_url names the cohort as breakdown_values; appearances are then
    // total_intervals long, as PostHog answers it
    const linked = rows(await table(`breakdown_values=${q([1])}`));
    expect(linked[0]).toEqual(['p4', [1, 1, 0]]);
    expect(linked.slice(1).sort()).toEqual([
      ['p1', [1, 0, 0]],
      ['p5', [1, 0, 0]],
    ]);
  });

  it('pages with next', async () => {
    const first = await table('selected_interval=0&limit=2');
    expect(first.result).toHaveLength(2);
    expect(first.next).toContain('offset=2');
    const rest = await t.api('GET', new URL(first.next!).pathname + new URL(first.next!).search);
    expect(rest.body.result).toHaveLength(2);
    expect([...first.result, ...rest.body.result].map((r: Row) => r.person.name).sort()).toEqual([
      'p1',
      'p2',
      'p3',
      'p4',
    ]);
    expect(rest.body.next).toBeNull();
  });
});

describe('persons/funnel/?funnel_step_breakdown', () => {
  const funnel = `events=${q([{ id: 'signup' }, { id: 'paid' }])}&date_from=2024-05-01&date_to=2024-05-09&breakdown=utm`;
  const persons = async (query: string) => {
    const res = await t.api('GET', path(`persons/funnel/?${funnel}&${query}`));
    expect(res.status, res.text).toBe(200);
    return names(res.body.results[0].people);
  };

  it('takes the value as PostHog’s funnel links send it: a JSON list, JSON text or bare', async () => {
    for (const value of [q(['ads']), q('"ads"'), 'ads']) {
      expect(await persons(`funnel_step=2&funnel_step_breakdown=${value}`)).toEqual(['f1']);
      expect(await persons(`funnel_step=1&funnel_step_breakdown=${value}`)).toEqual(['f1', 'f3']);
    }
    expect(await persons(`funnel_step=2&funnel_step_breakdown=${q(['seo'])}`)).toEqual(['f2']);
  });

  it('refuses what is not one value', async () => {
    const res = await t.api(
      'GET',
      path(`persons/funnel/?${funnel}&funnel_step_breakdown=${q({ utm: 'ads' })}`),
    );
    expect(res.status).toBe(400);
    expect(res.body.attr).toBe('funnel_step_breakdown');
  });
});

describe('funnel correlation counts only events inside each person’s path', () => {
  const funnel = `events=${q([{ id: 'visit' }, { id: 'buy' }])}&date_from=2024-05-01&date_to=2024-05-09&funnel_window_days=1`;
  const chat = `funnel_correlation_person_entity=${q({ id: 'chat', type: 'events' })}`;
  const persons = async (query: string) => {
    const res = await t.api('GET', path(`persons/funnel/correlation/?${funnel}&${chat}&${query}`));
    expect(res.status, res.text).toBe(200);
    return names(res.body.results[0].people);
  };

  it('converted: between the first and the last step (k2 chatted only before and after)', async () => {
    expect(await persons('funnel_correlation_person_converted=true')).toEqual(['k1']);
  });

  it('dropped off: within the conversion window after the first step', async () => {
    expect(await persons('funnel_correlation_person_converted=false')).toEqual(['k4']);
  });

  it('the correlation table counts the same persons', async () => {
    const res = await t.api('GET', path(`insights/funnel/correlation/?${funnel}`));
    expect(res.status, res.text).toBe(200);
    const rows = res.body.result.events as {
      event: { event: string };
      success_count: number;
      failure_count: number;
    }[];
    expect(rows.map((r) => [r.event.event, r.success_count, r.failure_count])).toEqual([
      ['chat', 1, 1],
    ]);
  });
});

describe('cohorts: legacy groups, cohorts/:id/persons/, persons/?cohort=', () => {
  const calculated = async (id: number) => {
    for (let i = 0; i < 200; i++) {
      const c = (await t.api('GET', path(`cohorts/${id}/`))).body;
      if (!c.is_calculating && c.last_calculation) return c as { count: number };
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`cohort ${id} was not calculated`);
  };
  const create = async (body: object) => {
    const res = await t.api('POST', path('cohorts/'), { name: 'legacy', ...body });
    expect(res.status, res.text).toBe(201);
    await calculated(res.body.id);
    return res.body as { id: number; filters: unknown };
  };
  const members = async (id: number) => {
    const res = await t.api('GET', path(`cohorts/${id}/persons/`));
    expect(res.status, res.text).toBe(200);
    return names(res.body.results);
  };

  it('a groups definition means what its filters equivalent means', async () => {
    const pro = { key: 'plan', value: 'pro', type: 'person' };
    const byGroups = await create({ groups: [{ properties: [pro] }] });
    expect(byGroups.filters).toEqual({
      properties: { type: 'OR', values: [{ type: 'AND', values: [pro] }] },
    });
    const byFilters = await create({
      filters: { properties: { type: 'AND', values: [pro] } },
    });
    expect(await members(byGroups.id)).toEqual(['c1', 'c2']);
    expect(await members(byFilters.id)).toEqual(['c1', 'c2']);
    // PostHog's oldest forms: {key: value}, and properties typed "event" read as person ones
    expect(await members((await create({ groups: [{ properties: { plan: 'pro' } }] })).id)).toEqual(
      ['c1', 'c2'],
    );
    const typedEvent = await create({
      groups: [{ properties: [{ key: 'plan', value: 'free', type: 'event' }] }],
    });
    expect(await members(typedEvent.id)).toEqual(['c3']);
  });

  it('event groups: did the event count times in the last days; groups are OR-ed', async () => {
    const twice = await create({
      groups: [{ event_id: 'purchased', days: 30, count: 2, count_operator: 'gte' }],
    });
    expect(await members(twice.id)).toEqual(['c1']);
    const either = await create({
      groups: [
        { properties: [{ key: 'plan', value: 'free', type: 'person' }] },
        { event_id: 'purchased', days: 30 },
      ],
    });
    expect(await members(either.id)).toEqual(['c1', 'c3']);
  });

  it('refuses a group with nothing in it, or an action', async () => {
    for (const group of [{ days: 3 }, { action_id: 7 }]) {
      const res = await t.api('POST', path('cohorts/'), { name: 'bad', groups: [group] });
      expect(res.status, res.text).toBe(400);
      expect(res.body.attr).toBe('groups');
    }
  });

  it('cohorts/:id/persons/ pages the members; persons/?cohort= filters by them', async () => {
    const pro = await create({
      filters: {
        properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person' }] },
      },
    });
    const page = await t.api('GET', path(`cohorts/${pro.id}/persons/?limit=1`));
    expect(page.status, page.text).toBe(200);
    expect(page.body.results).toHaveLength(1);
    expect(page.body.next).toContain('offset=1');
    expect(page.body.previous).toBeNull();
    const listed = await t.api('GET', path(`persons/?cohort=${pro.id}`));
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.count).toBe(2);
    expect(names(listed.body.results)).toEqual(['c1', 'c2']);
    const none = await t.api('GET', path('persons/?cohort=999999'));
    expect(none.body.count).toBe(0);
    expect((await t.api('GET', path('cohorts/999999/persons/'))).status).toBe(404);
    expect((await t.api('GET', path('persons/?cohort=abc'))).status).toBe(400);
  });

  it('cohorts/:id/persons/ needs person:read besides cohort:read, as in PostHog', async () => {
    const pro = await create({
      filters: {
        properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person' }] },
      },
    });
    const only = await newUser(t, { scopes: ['cohort:read'] });
    const refused = await t.api('GET', path(`cohorts/${pro.id}/persons/`), undefined, only.key);
    expect(refused.status).toBe(403);
    const both = await newUser(t, { scopes: ['cohort:read', 'person:read'] });
    const read = await t.api('GET', path(`cohorts/${pro.id}/persons/`), undefined, both.key);
    expect(read.status, read.text).toBe(200);
    expect(names(read.body.results)).toEqual(['c1', 'c2']);
  });
});
