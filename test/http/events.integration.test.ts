import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personUuidFor } from '../../projections/persons/personsFold.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectError, expectValidation, linkPath, newProject, newUser } from './helpers.ts';

let t: TestService;
const id: Record<string, string> = {};
const TICKS = ['t1', 't2', 't3', 't4', 't5'];

const elements = [
  {
    tag_name: 'a',
    $el_text: 'Sign up',
    attr__class: 'btn btn-primary',
    attr__href: '/signup',
    nth_child: 1,
    nth_of_type: 2,
  },
  { tag_name: 'div', nth_child: 1, nth_of_type: 1 },
];

const fixtures = () => [
  {
    name: 'e1',
    event: 'pageview',
    distinct_id: 'alice',
    ts: '2024-03-01T10:00:00.000Z',
    properties: {
      $browser: 'Chrome',
      plan: 'pro',
      amount: 30,
      flag: true,
      signup_date: '2024-01-15',
      nested: { a: { b: 'deep' } },
    },
  },
  {
    name: 'e2',
    event: 'pageview',
    distinct_id: 'bob',
    ts: '2024-03-01T11:00:00.000Z',
    properties: {
      $browser: 'Firefox',
      plan: 'free',
      amount: 5,
      signup_date: '2024-02-20T08:30:00Z',
    },
  },
  {
    name: 'e3',
    event: '$autocapture',
    distinct_id: 'alice',
    ts: '2024-03-02T09:00:00.250Z',
    properties: { $event_type: 'click', $elements: elements },
  },
  {
    name: 'e4',
    event: 'purchase',
    distinct_id: 'carol',
    ts: '2024-03-03T12:00:00.000Z',
    properties: { amount: 100, plan: 'pro', 'weird"key': 'x', $browser: 'Chrome' },
  },
  ...TICKS.map((name) => ({
    name,
    event: 'tick',
    distinct_id: 'dave',
    ts: '2024-03-04T00:00:00.000Z',
    properties: { n: name },
  })),
  {
    name: 'e10',
    event: 'pageview',
    distinct_id: 'erin',
    ts: '2024-03-05T08:00:00.000Z',
    properties: { $browser: 'Safari', amount: '42', note: "it's 50% off_now" },
  },
];
const ALL = ['e10', ...TICKS, 'e4', 'e3', 'e2', 'e1']; // newest first (ticks share a timestamp)

const eventsPath = (
  query: Record<string, string | string[]> = {},
  projectId: number = t.projectId,
) => {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query))
    for (const one of Array.isArray(v) ? v : [v]) qs.append(k, one);
  const s = qs.toString();
  return `/api/projects/${projectId}/events/${s ? `?${s}` : ''}`;
};
const list = async (query: Record<string, string | string[]> = {}) => {
  const res = await t.api('GET', eventsPath(query));
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const names = (results: { id: string }[]) =>
  results.map((r) => Object.keys(id).find((k) => id[k] === r.id));
const filtered = async (properties: unknown) =>
  names((await list({ properties: JSON.stringify(properties) })).results);
const where = async (...conditions: string[]) =>
  names((await list({ where: JSON.stringify(conditions) })).results);
/** Names in list order, ignoring the order among the tied ticks. */
const sortTicks = (xs: (string | undefined)[]) =>
  xs.map((x) => (x && TICKS.includes(x) ? 'tick' : x));

/** RFC 4180, as a spreadsheet reads it (csv-parse). */
const parseCsv = (text: string): string[][] =>
  parse(text, { relax_column_count: true }) as string[][];

beforeAll(async () => {
  t = await startTestService();
  const batch = fixtures().map((f) => {
    id[f.name] = randomUUID();
    return {
      event: f.event,
      uuid: id[f.name],
      timestamp: f.ts,
      properties: { distinct_id: f.distinct_id, ...f.properties },
    };
  });
  await capture(t, batch);
  const head = await t.service.ctx.store.headPosition();
  expect(await t.service.runners.get('clickhouse:events')!.waitFor(head, 20_000)).toBe(true);
});
afterAll(async () => t?.close());

describe('GET events/', () => {
  it('lists every event newest first, in the PostHog event shape, with no next when all fit', async () => {
    const body = await list();
    expect(Object.keys(body).sort()).toEqual(['next', 'results']);
    expect(body.next).toBeNull();
    expect(sortTicks(names(body.results))).toEqual(sortTicks(ALL));
    const e1 = body.results.find((r: any) => r.id === id.e1);
    expect(e1).toEqual({
      id: id.e1,
      distinct_id: 'alice',
      properties: expect.objectContaining({
        $browser: 'Chrome',
        plan: 'pro',
        amount: 30,
        flag: true,
        nested: { a: { b: 'deep' } },
      }),
      event: 'pageview',
      timestamp: '2024-03-01T10:00:00.000000+00:00',
      person: { is_identified: false, distinct_ids: ['alice'], properties: {} },
      elements: [],
      elements_chain: '',
    });
  });

  it('parses the elements chain of autocapture events into elements', async () => {
    const e3 = (await list({ event: '$autocapture' })).results[0];
    expect(e3.timestamp).toBe('2024-03-02T09:00:00.250000+00:00');
    expect(e3.elements_chain).toBe(
      'a.btn.btn-primary:attr__class="btn btn-primary"attr__href="/signup"href="/signup"nth-child="1"nth-of-type="2"text="Sign up";div:nth-child="1"nth-of-type="1"',
    );
    expect(e3.properties.$elements).toBeUndefined();
    expect(e3.elements).toEqual([
      {
        event: null,
        text: 'Sign up',
        tag_name: 'a',
        attr_class: ['btn', 'btn-primary'],
        href: '/signup',
        attr_id: null,
        nth_child: 1,
        nth_of_type: 2,
        attributes: { attr__class: 'btn btn-primary', attr__href: '/signup' },
        order: 0,
      },
      {
        event: null,
        text: null,
        tag_name: 'div',
        attr_class: null,
        href: null,
        attr_id: null,
        nth_child: 1,
        nth_of_type: 1,
        attributes: {},
        order: 1,
      },
    ]);
  });

  it('filters by event, distinct_id and person_id', async () => {
    expect(names((await list({ event: 'pageview' })).results)).toEqual(['e10', 'e2', 'e1']);
    expect(names((await list({ distinct_id: 'alice' })).results)).toEqual(['e3', 'e1']);
    expect(names((await list({ distinct_id: 'alice', event: 'pageview' })).results)).toEqual([
      'e1',
    ]);
    expect(names((await list({ person_id: personUuidFor(t.projectId, 'bob') })).results)).toEqual([
      'e2',
    ]);
    expect((await list({ distinct_id: 'nobody' })).results).toEqual([]);
    expect((await list({ person_id: '999999' })).results).toEqual([]);
  });

  it('bounds by after and before (exclusive), ISO or relative', async () => {
    expect(
      names(
        (await list({ after: '2024-03-01T10:00:00Z', before: '2024-03-03T12:00:00Z' })).results,
      ),
    ).toEqual(['e3', 'e2']);
    expect(names((await list({ after: '2024-03-04T00:00:00+00:00' })).results)).toEqual(['e10']);
    expect(names((await list({ before: '2024-03-01 11:00:00.000001' })).results)).toEqual([
      'e2',
      'e1',
    ]);
    expect((await list({ after: '-30d' })).results).toEqual([]); // the fixtures are from 2024
    expect((await list({ before: '-1d' })).results).toHaveLength(10);
    expectValidation(await t.api('GET', eventsPath({ after: 'yesterday' })), 'after');
    expectValidation(await t.api('GET', eventsPath({ before: '2024-13-01' })), 'before');
  });

  it('limits (default 100, at most 10,000: more is a 400, never a shorter page) and offsets', async () => {
    const three = await list({ limit: '3' });
    expect(three.results).toHaveLength(3);
    expect(three.next).not.toBeNull();
    const all = await list({ limit: '10000' });
    expect(all.results).toHaveLength(10);
    expect(all.next).toBeNull();
    const over = await t.api('GET', eventsPath({ limit: '10001' }));
    expectValidation(over, 'limit');
    expect(over.body.detail).toContain('at most 10000');
    expect(names((await list({ event: 'pageview', offset: '1' })).results)).toEqual(['e2', 'e1']);
    expectValidation(await t.api('GET', eventsPath({ limit: '0' })), 'limit');
    expectValidation(await t.api('GET', eventsPath({ limit: 'many' })), 'limit');
    expectValidation(await t.api('GET', eventsPath({ offset: '-1' })), 'offset');
  });

  it('orders ascending with orderBy ["timestamp"], and by other expressions', async () => {
    expect(sortTicks(names((await list({ orderBy: '["timestamp"]' })).results))).toEqual(
      sortTicks([...ALL].reverse()),
    );
    expect(
      names((await list({ orderBy: '["timestamp ASC"]', event: 'pageview' })).results),
    ).toEqual(['e1', 'e2', 'e10']);
    expect(names((await list({ orderBy: '["distinct_id"]', event: 'pageview' })).results)).toEqual([
      'e1',
      'e2',
      'e10',
    ]);
    expect(
      names((await list({ orderBy: '["-properties.$browser"]', event: 'pageview' })).results),
    ).toEqual(['e10', 'e2', 'e1']);
    expectValidation(await t.api('GET', eventsPath({ orderBy: '-timestamp' })), 'orderBy');
    expectValidation(await t.api('GET', eventsPath({ orderBy: '["nope"]' })), 'orderBy');
  });

  it('pages with a timestamp cursor in next, across events sharing a timestamp, both directions', async () => {
    for (const [orderBy, expected] of [
      [undefined, ALL],
      ['["timestamp"]', [...ALL].reverse()],
    ] as const) {
      const seen: string[] = [];
      let path: string | null = eventsPath({ limit: '2', ...(orderBy ? { orderBy } : {}) });
      let pages = 0;
      while (path) {
        const res = await t.api('GET', path);
        expect(res.status, res.text).toBe(200);
        seen.push(...(names(res.body.results) as string[]));
        if (res.body.next) {
          const next = new URL(res.body.next);
          expect(next.searchParams.get(orderBy ? 'after' : 'before')).toBe(
            res.body.results.at(-1).timestamp,
          );
          expect(next.searchParams.get(orderBy ? 'after_uuid' : 'before_uuid')).toBe(
            res.body.results.at(-1).id,
          );
          expect(next.searchParams.get('limit')).toBe('2');
          expect(next.searchParams.has('offset')).toBe(false);
        }
        path = res.body.next ? linkPath(t, res.body.next) : null;
        expect(++pages).toBeLessThan(10);
      }
      expect(pages).toBe(5);
      expect(new Set(seen).size).toBe(10);
      expect(sortTicks(seen)).toEqual(sortTicks([...expected]));
    }
  });

  it('keeps the other parameters in next', async () => {
    const first = await list({ event: 'tick', limit: '3' });
    expect(new URL(first.next).searchParams.get('event')).toBe('tick');
    const second = await t.api('GET', linkPath(t, first.next));
    expect(second.body.results).toHaveLength(2);
    expect(second.body.next).toBeNull();
    expect(new Set([...first.results, ...second.body.results].map((r: any) => r.id))).toEqual(
      new Set(TICKS.map((n) => id[n])),
    );
  });

  it('answers CSV with format=csv', async () => {
    const res = await fetch(`${t.url}${eventsPath({ format: 'csv', event: 'pageview' })}`, {
      headers: { authorization: `Bearer ${t.personalApiKey}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const [header, ...rows] = parseCsv(await res.text());
    expect(header!.slice(0, 2)).toEqual(['id', 'distinct_id']);
    expect(header).toEqual(
      expect.arrayContaining([
        'properties.$browser',
        'properties.amount',
        'event',
        'timestamp',
        'person',
        'elements_chain',
      ]),
    );
    expect(rows).toHaveLength(3);
    const col = (name: string) => rows.map((r) => r[header!.indexOf(name)]);
    expect(col('id')).toEqual([id.e10, id.e2, id.e1]);
    expect(col('properties.$browser')).toEqual(['Safari', 'Firefox', 'Chrome']);
    expect(col('properties.note')).toEqual(["it's 50% off_now", '', '']);
    expect(col('timestamp')[2]).toBe('2024-03-01T10:00:00.000000+00:00');
  });

  it('only shows the project of the URL', async () => {
    const other = await newProject(t);
    const res = await t.api('GET', eventsPath({}, other));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ next: null, results: [] });
  });

  it('needs a key with query:read', async () => {
    expectError(await t.api('GET', eventsPath(), undefined, null), 401);
    const { key } = await newUser(t, { scopes: ['feature_flag:read'] });
    expectError(await t.api('GET', eventsPath(), undefined, key), 403, {
      code: 'permission_denied',
    });
    const reader = await newUser(t, { scopes: ['query:read'] });
    expect((await t.api('GET', eventsPath(), undefined, reader.key)).status).toBe(200);
  });

  it('answers no event for an unknown action_id, and a 400 for a word (events.actions covers matching)', async () => {
    const res = await t.api('GET', eventsPath({ action_id: '987654' }));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ next: null, results: [] });
    expectValidation(await t.api('GET', eventsPath({ action_id: 'signup' })), 'action_id');
  });
});

describe('GET events/:id/ and events/values/', () => {
  it('returns one event by UUID', async () => {
    const res = await t.api('GET', `/api/projects/${t.projectId}/events/${id.e4}/`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      id: id.e4,
      distinct_id: 'carol',
      properties: expect.objectContaining({ amount: 100, plan: 'pro', 'weird"key': 'x' }),
      event: 'purchase',
      timestamp: '2024-03-03T12:00:00.000000+00:00',
      person: { is_identified: false, distinct_ids: ['carol'], properties: {} },
      elements: [],
      elements_chain: '',
    });
    const csv = await fetch(`${t.url}/api/projects/${t.projectId}/events/${id.e4}/?format=csv`, {
      headers: { authorization: `Bearer ${t.personalApiKey}` },
    });
    const [header, row] = parseCsv(await csv.text());
    expect(row![header!.indexOf('event')]).toBe('purchase');
  });

  it('answers 400 Invalid UUID and 404 for an absent event', async () => {
    const bad = await t.api('GET', `/api/projects/${t.projectId}/events/not-a-uuid/`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      type: 'validation_error',
      code: 'invalid',
      detail: 'Invalid UUID',
      attr: null,
    });
    const missing = randomUUID();
    const absent = await t.api('GET', `/api/projects/${t.projectId}/events/${missing}/`);
    expect(absent.status).toBe(404);
    expect(absent.body).toEqual({
      type: 'invalid_request',
      code: 'not_found',
      detail: `No events exist for event UUID ${missing}`,
      attr: null,
    });
    const other = await newProject(t);
    expect((await t.api('GET', `/api/projects/${other}/events/${id.e4}/`)).status).toBe(404);
  });

  it('lists property values, most frequent first, filtered by value and event name', async () => {
    const values = (q: string) => t.api('GET', `/api/projects/${t.projectId}/events/values/?${q}`);
    expect((await values('key=$browser')).body).toEqual([
      { name: 'Chrome' },
      { name: 'Firefox' },
      { name: 'Safari' },
    ]);
    expect((await values('key=$browser&value=FIR')).body).toEqual([{ name: 'Firefox' }]);
    expect((await values('key=$browser&event_name=purchase')).body).toEqual([{ name: 'Chrome' }]);
    expect(
      (await values('key=$browser&event_name=purchase&event_name=pageview&limit=2')).body,
    ).toEqual([{ name: 'Chrome' }, { name: 'Firefox' }]);
    expect((await values('key=amount')).body).toEqual([
      { name: '100' },
      { name: '30' },
      { name: '42' },
      { name: '5' },
    ]);
    expect((await values('key=note&value=50%25')).body).toEqual([{ name: "it's 50% off_now" }]);
    expect((await values('key=nothing')).body).toEqual([]);
    expectValidation(await values('value=x'), 'key');
  });
});

describe('GET events/?properties=', () => {
  it('applies every event property operator', async () => {
    const f = (key: string, operator: string, value?: unknown) =>
      filtered([{ key, operator, value, type: 'event' }]);
    expect(await filtered([{ key: '$browser', value: 'Chrome' }])).toEqual(['e4', 'e1']); // operator and type default to exact, event
    expect(await f('$browser', 'exact', ['Firefox', 'Safari'])).toEqual(['e10', 'e2']);
    expect(await f('amount', 'exact', 30)).toEqual(['e1']);
    expect(await f('flag', 'exact', true)).toEqual(['e1']);
    expect(sortTicks(await f('$browser', 'is_not', 'Chrome'))).toEqual(
      sortTicks(['e10', ...TICKS, 'e3', 'e2']),
    ); // missing counts as "not"
    expect(sortTicks(await f('$browser', 'is_not', ['Chrome', 'Safari']))).toEqual(
      sortTicks([...TICKS, 'e3', 'e2']),
    );
    expect(await f('plan', 'is_set')).toEqual(['e4', 'e2', 'e1']);
    expect(sortTicks(await f('amount', 'is_not_set'))).toEqual(sortTicks([...TICKS, 'e3']));
    expect(await f('$browser', 'icontains', 'FOX')).toEqual(['e2']);
    expect(await f('note', 'icontains', '50%')).toEqual(['e10']);
    expect(await f('note', 'icontains', '0%_')).toEqual([]); // % and _ are literal
    expect(await f('note', 'icontains', 'off_')).toEqual(['e10']);
    expect(sortTicks(await f('$browser', 'not_icontains', 'R'))).toEqual(
      sortTicks([...TICKS, 'e3']),
    );
    expect(sortTicks(await f('$browser', 'not_icontains', 'o'))).toEqual(
      sortTicks(['e10', ...TICKS, 'e3']),
    );
    expect(await f('$browser', 'regex', '^(Fire|Saf)')).toEqual(['e10', 'e2']);
    expect(await f('plan', 'not_regex', '^p').then(sortTicks)).toEqual(
      sortTicks(['e10', ...TICKS, 'e3', 'e2']),
    );
    expect(await f('amount', 'gt', 30)).toEqual(['e10', 'e4']);
    expect(await f('amount', 'gte', '30')).toEqual(['e10', 'e4', 'e1']);
    expect(await f('amount', 'lt', 30)).toEqual(['e2']);
    expect(await f('amount', 'lte', 42)).toEqual(['e10', 'e2', 'e1']);
    expect(await f('signup_date', 'is_date_before', '2024-02-01')).toEqual(['e1']);
    expect(await f('signup_date', 'is_date_after', '2024-02-01')).toEqual(['e2']);
    expect(await f('signup_date', 'is_date_exact', '2024-02-20T08:30:00Z')).toEqual(['e2']);
    expect(await f('signup_date', 'is_date_after', '-3000d')).toEqual(['e2', 'e1']);
    expect(await f('weird"key', 'exact', 'x')).toEqual(['e4']);
  });

  it('combines filters: lists are AND, groups AND/OR nest, hogql filters are conditions', async () => {
    expect(
      await filtered([
        { key: 'plan', value: 'pro' },
        { key: '$browser', value: 'Chrome' },
        { key: 'amount', operator: 'gt', value: 50 },
      ]),
    ).toEqual(['e4']);
    expect(
      await filtered({
        type: 'OR',
        values: [
          { key: 'plan', value: 'free' },
          { type: 'AND', values: [{ key: 'amount', operator: 'gt', value: 99 }] },
        ],
      }),
    ).toEqual(['e4', 'e2']);
    expect(
      await filtered([{ key: "event = 'purchase' or distinct_id = 'bob'", type: 'hogql' }]),
    ).toEqual(['e4', 'e2']);
    expect((await list({ properties: '[]' })).results).toHaveLength(10);
  });

  it('answers 400 naming what is not supported or invalid', async () => {
    const bad = async (properties: string) => {
      const res = await t.api('GET', eventsPath({ properties }));
      expectValidation(res, 'properties');
      return res.body.detail as string;
    };
    expect(
      await bad(
        JSON.stringify({
          type: 'OR',
          values: [
            { key: 'email', value: 'a@b.c', type: 'person' },
            { key: 'plan', value: 'pro' },
          ],
        }),
      ),
    ).toMatch(/OR group mixing person and event filters/);
    expect(await bad(JSON.stringify([{ key: 'id', value: 3, type: 'cohort' }]))).toMatch(
      /"cohort" are not supported/,
    );
    expect(
      await bad(JSON.stringify([{ key: 'v', operator: 'semver_gt', value: '1.0.0' }])),
    ).toMatch(/"semver_gt" is not supported/);
    expect(await bad(JSON.stringify([{ key: 'amount', operator: 'gt', value: 'lots' }]))).toMatch(
      /needs a number/,
    );
    expect(await bad(JSON.stringify([{ key: 'x', operator: 'regex', value: '(' }]))).toMatch(
      /invalid regular expression/,
    );
    expect(
      await bad(JSON.stringify([{ key: 'x', operator: 'is_date_before', value: 'soon' }])),
    ).toMatch(/ISO 8601/);
    expect(await bad(JSON.stringify([{ key: 'x', value: [] }]))).toMatch(/empty list/);
    expect(await bad(JSON.stringify([{ value: 'x' }]))).toMatch(/key/);
    expect(await bad(JSON.stringify([{ key: 'count() > 1', type: 'hogql' }]))).toMatch(
      /aggregates are not allowed/,
    );
    expect(await bad('{not json')).toMatch(/JSON/);
    // JavaScript accepts a lookahead, ClickHouse's RE2 does not: still a 400
    const res = await t.api(
      'GET',
      eventsPath({
        properties: JSON.stringify([{ key: '$browser', operator: 'regex', value: '(?=C)' }]),
      }),
    );
    expectValidation(res, null);
    expect(res.body.detail).toMatch(/CANNOT_COMPILE_REGEXP/);
  });
});

describe('GET events/?select=&where= (HogQL)', () => {
  const select = async (query: Record<string, string>) => {
    const res = await t.api('GET', eventsPath(query));
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  it('filters with where conditions', async () => {
    expect(await where('properties.amount > 20')).toEqual(['e10', 'e4', 'e1']);
    expect(sortTicks(await where("event IN ('purchase', 'tick')"))).toEqual(
      sortTicks([...TICKS, 'e4']),
    );
    expect(await where("distinct_id LIKE 'a%'", "event != '$autocapture'")).toEqual(['e1']);
    expect(await where("distinct_id NOT ILIKE '%A%'", 'properties.amount IS NOT NULL')).toEqual([
      'e10',
      'e2',
    ]);
    expect(await where("NOT (event = 'tick') AND lower(properties.$browser) = 'chrome'")).toEqual([
      'e4',
      'e1',
    ]);
    expect(await where("properties['weird\"key'] = 'x'")).toEqual(['e4']);
    expect(
      await where("properties.`$browser` = 'Safari' OR properties.nested.a.b = 'deep'"),
    ).toEqual(['e10', 'e1']);
    expect(await where("timestamp >= '2024-03-04'", "event = 'pageview'")).toEqual(['e10']);
    expect(await where("toDate(timestamp) = '2024-03-01'")).toEqual(['e2', 'e1']);
    expect(await where('properties.flag = true')).toEqual(['e1']);
    expect(await where('toInt(properties.amount) * 2 + 1 = 61')).toEqual(['e1']);
    expect(await where("concat(distinct_id, '-', event) = 'bob-pageview'")).toEqual(['e2']);
    expect(await where("coalesce(properties.plan, 'none') = 'none'", "event = 'pageview'")).toEqual(
      ['e10'],
    );
    expect(
      await where('length(properties.note) = 16', "substring(properties.note, 1, 4) = 'it''s'"),
    ).toEqual(['e10']);
    expect(await where(`uuid = '${id.e2}'`)).toEqual(['e2']);
    expect(await where(`person_id = '${personUuidFor(t.projectId, 'carol')}'`)).toEqual(['e4']);
  });

  it('treats string literals as values, never as SQL', async () => {
    expect(await where("event = 'pageview'' OR 1=1 --'")).toEqual([]);
    expect(await where("event = 'x\\'; DROP TABLE events; --'")).toEqual([]);
    expect(await filtered([{ key: "a') OR 1=1 --", value: "') OR ('1'='1" }])).toEqual([]);
    expect((await list()).results).toHaveLength(10);
  });

  it('returns rows of the selected expressions, with aggregates grouped', async () => {
    const rows = await select({
      select: JSON.stringify([
        'event',
        'properties.$browser',
        'timestamp',
        'toFloat(properties.amount) / 2 AS half',
      ]),
      where: '["properties.amount IS NOT NULL"]',
    });
    expect(rows).toEqual({
      columns: ['event', 'properties.$browser', 'timestamp', 'half'],
      types: ['String', 'Nullable(String)', "DateTime64(6, 'UTC')", 'Nullable(Float64)'],
      results: [
        ['pageview', 'Safari', '2024-03-05T08:00:00.000000+00:00', 21],
        ['purchase', 'Chrome', '2024-03-03T12:00:00.000000+00:00', 50],
        ['pageview', 'Firefox', '2024-03-01T11:00:00.000000+00:00', 2.5],
        ['pageview', 'Chrome', '2024-03-01T10:00:00.000000+00:00', 15],
      ],
      next: null,
    });
    const counts = await select({
      select: JSON.stringify([
        'event',
        'count()',
        'count(DISTINCT distinct_id)',
        'sum(toFloat(properties.amount))',
        'max(timestamp)',
      ]),
    });
    expect(counts.columns).toEqual([
      'event',
      'count()',
      'count(DISTINCT distinct_id)',
      'sum(toFloat(properties.amount))',
      'max(timestamp)',
    ]);
    expect(counts.results).toEqual([
      ['tick', 5, 1, null, '2024-03-04T00:00:00.000000+00:00'],
      ['pageview', 3, 3, 77, '2024-03-05T08:00:00.000000+00:00'],
      ['$autocapture', 1, 1, null, '2024-03-02T09:00:00.250000+00:00'],
      ['purchase', 1, 1, 100, '2024-03-03T12:00:00.000000+00:00'],
    ]);
    expect(
      (
        await select({
          select: '["count()", "avg(toFloat(properties.amount))"]',
          where: '["event = \'pageview\'"]',
        })
      ).results,
    ).toEqual([[3, 77 / 3]]);
    const ordered = await select({
      select: '["distinct_id", "count() AS n"]',
      orderBy: '["n", "distinct_id DESC"]',
    });
    expect(ordered.results).toEqual([
      ['erin', 1],
      ['carol', 1],
      ['bob', 1],
      ['alice', 2],
      ['dave', 5],
    ]);
  });

  it('pages select results: timestamp cursor for rows, offset for aggregates', async () => {
    const first = await select({ select: '["event"]', limit: '6' });
    expect(first.results).toEqual([['pageview'], ['tick'], ['tick'], ['tick'], ['tick'], ['tick']]);
    expect(new URL(first.next).searchParams.get('before')).toBe('2024-03-04T00:00:00.000000+00:00');
    const second = await t.api('GET', linkPath(t, first.next));
    expect(second.body.results).toEqual([
      ['purchase'],
      ['$autocapture'],
      ['pageview'],
      ['pageview'],
    ]);
    expect(second.body.next).toBeNull();

    const agg = await select({ select: '["event", "count()"]', limit: '3' });
    expect(new URL(agg.next).searchParams.get('offset')).toBe('3');
    const rest = await t.api('GET', linkPath(t, agg.next));
    expect([...agg.results, ...rest.body.results].map((r: any[]) => r[0])).toEqual([
      'tick',
      'pageview',
      '$autocapture',
      'purchase',
    ]);
    expect(rest.body.next).toBeNull();
  });

  it('answers select results as CSV', async () => {
    const res = await fetch(
      `${t.url}${eventsPath({ select: '["event", "count()"]', format: 'csv' })}`,
      { headers: { authorization: `Bearer ${t.personalApiKey}` } },
    );
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(parseCsv(await res.text())).toEqual([
      ['event', 'count()'],
      ['tick', '5'],
      ['pageview', '3'],
      ['$autocapture', '1'],
      ['purchase', '1'],
    ]);
  });

  it('answers 400 for what the compiler refuses, naming it', async () => {
    const bad = async (query: Record<string, string>, attr: string | null, detail: RegExp) => {
      const res = await t.api('GET', eventsPath(query));
      expectValidation(res, attr, 'invalid_input');
      expect(res.body.detail).toMatch(detail);
    };
    const w = (...conditions: string[]) => ({ where: JSON.stringify(conditions) });
    // PostHog's parser names the syntax error and its position
    await bad(w('event = '), 'where', /SyntaxError: .* \(at position 8\)/);
    await bad(w("event = 'x'; SELECT 1"), 'where', /SyntaxError: mismatched input ';'/);
    await bad(w("event = 'unterminated"), 'where', /SyntaxError/);
    await bad(w('foo = 1'), 'where', /Unknown field "foo"/);
    await bad(w('sleep(3) = 0'), 'where', /Unsupported function: sleep/);
    await bad(w('event IN (SELECT event FROM events)'), 'where', /subqueries/);
    await bad(w("event::String = 'x'"), 'where', /Unsupported HogQL: TypeCast/);
    await bad(w('count() > 1'), 'where', /aggregates are not allowed/);
    await bad(
      w("person.properties.email = 'a' or event = 'x'"),
      'where',
      /Unsupported use of "person.properties.email"/,
    );
    await bad(
      w(`${'('.repeat(21)}true${')'.repeat(21)}`),
      'where',
      /nested more than 20 levels deep/,
    );
    await bad({ where: "event = 'x'" }, 'where', /JSON array/);
    await bad({ select: '["*"]' }, 'select', /"\*" is not supported/);
    await bad(
      { select: '["count() + length(event)"]' },
      'select',
      /mixes aggregate and non-aggregate/,
    );
    await bad({ select: '["sum(count())"]' }, 'select', /cannot be nested/);
    await bad({ select: '[]' }, 'select', /at least one/);
    await bad(
      { select: '["event", "count()"]', orderBy: '["distinct_id"]' },
      'orderBy',
      /must be an aggregate or one of the non-aggregate select/,
    );
    await bad({ orderBy: '["count()"]' }, 'orderBy', /need an aggregate select/);
    // what ClickHouse refuses of a valid expression is a 400 naming its error
    await bad(w('event'), null, /^The query could not run \(/);
    await bad({ select: '["lower()"]' }, null, /NUMBER_OF_ARGUMENTS_DOESNT_MATCH/);
  });

  it("takes full HogQL expressions: intervals, toStartOfDay, IN (…), properties['x'], CASE, BETWEEN", async () => {
    // each answered 400 on the hand-written subset ("Unsupported HogQL: INTERVAL", …)
    expect(await where('timestamp > now() - interval 1 day')).toEqual([]);
    expect(await where("timestamp > toDateTime('2024-03-05') - interval 1 day")).toEqual(['e10']);
    expect(await where("toStartOfDay(timestamp) = toDateTime('2024-03-01')")).toEqual(['e2', 'e1']);
    expect(await where("properties['$browser'] IN ('Safari', 'Firefox')")).toEqual(['e10', 'e2']);
    expect(await where("event IN (distinct_id, 'purchase')")).toEqual(['e4']);
    expect(await where("distinct_id BETWEEN 'a' AND 'b'")).toEqual(['e3', 'e1']);
    expect(await where("CASE WHEN event = 'purchase' THEN 1 ELSE 0 END = 1")).toEqual(['e4']);
    expect(await where('timestamp > 5')).toHaveLength(10);
    const days = await t.api(
      'GET',
      eventsPath({
        select: JSON.stringify([
          'toStartOfDay(timestamp) AS day',
          'count()',
          'max(DISTINCT event)',
        ]),
        where: JSON.stringify(["event IN ('pageview', 'purchase')"]),
        orderBy: '["day"]',
      }),
    );
    expect(days.status, days.text).toBe(200);
    expect(days.body.columns).toEqual(['day', 'count()', 'max(DISTINCT event)']);
    expect(days.body.results).toEqual([
      ['2024-03-01T00:00:00+00:00', 2, 'pageview'],
      ['2024-03-03T00:00:00+00:00', 1, 'purchase'],
      ['2024-03-05T00:00:00+00:00', 1, 'pageview'],
    ]);
  });
});

describe('read-your-writes', () => {
  // last in the file: it adds an event
  it('finds an event right after /batch/ answered, without waiting by hand', async () => {
    const uuid = randomUUID();
    await capture(t, [
      {
        event: 'late',
        uuid,
        timestamp: '2023-01-01T00:00:00Z',
        properties: { distinct_id: 'zed' },
      },
    ]);
    const one = await t.api('GET', `/api/projects/${t.projectId}/events/${uuid}/`);
    expect(one.status, one.text).toBe(200);
    expect(one.body.event).toBe('late');
  });
});
