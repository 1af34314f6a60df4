import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectError, expectValidation, newUser } from './helpers.ts';

let t: TestService;
let path: string;
const query = (body: unknown, key?: string) => t.api('POST', path, body, key);

beforeAll(async () => {
  t = await startTestService();
  path = `/api/projects/${t.projectId}/query/`;
  await capture(t, [
    {
      event: '$identify',
      properties: {
        distinct_id: 'ana',
        $set: { email: 'ana@example.com', plan: 'pro' },
        $browser: 'Chrome',
      },
      timestamp: '2024-05-01T10:00:00Z',
    },
    {
      event: '$autocapture',
      properties: {
        distinct_id: 'ana',
        $elements_chain: 'button.cta:attr__class="cta"nth-child="1"nth-of-type="1"text="Sign up"',
      },
      timestamp: '2024-05-01T10:30:00Z',
    },
    {
      event: 'viewed',
      properties: { distinct_id: 'ana', $browser: 'Chrome', n: 3 },
      timestamp: '2024-05-01T11:00:00Z',
    },
    {
      event: 'viewed',
      properties: { distinct_id: 'bo', $browser: 'Firefox', n: 7 },
      timestamp: '2024-05-02T09:00:00Z',
    },
    {
      event: 'bought',
      properties: { distinct_id: 'bo', $browser: 'Firefox', $set: { plan: 'free' } },
      timestamp: '2024-05-03T12:00:00Z',
    },
  ]);
});
afterAll(async () => t?.close());

describe('POST /query/ HogQLQuery', () => {
  it("answers PostHog's HogQLQueryResponse: results, columns, types, hogql, clickhouse, paging", async () => {
    const res = await query({
      query: {
        kind: 'HogQLQuery',
        query: 'select event, count() as c from events group by event order by event',
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results).toEqual([
      ['$autocapture', 1],
      ['$identify', 1],
      ['bought', 1],
      ['viewed', 2],
    ]);
    expect(res.body.columns).toEqual(['event', 'c']);
    expect(res.body.types.map((p: string[]) => p[0])).toEqual(['event', 'c']);
    expect(res.body).toMatchObject({ hasMore: false, limit: 100, offset: 0, is_cached: false });
    expect(res.body.hogql).toContain('count()');
    expect(res.body.clickhouse).toContain('team_id');
  });

  it('takes values for placeholders, filters (dateRange and properties) for {filters}, and limit/offset', async () => {
    const res = await query({
      query: {
        kind: 'HogQLQuery',
        query:
          'select distinct_id, event from events where event = {name} and {filters} order by timestamp',
        values: { name: 'viewed' },
        filters: {
          dateRange: { date_from: '2024-05-02', date_to: '2024-05-04' },
          properties: [{ key: '$browser', value: 'Firefox', operator: 'exact', type: 'event' }],
        },
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results).toEqual([['bo', 'viewed']]);

    const page = await query({
      query: {
        kind: 'HogQLQuery',
        query: 'select event from events order by timestamp',
        limit: 2,
        offset: 1,
      },
    });
    expect(page.status, page.text).toBe(200);
    expect(page.body.results).toEqual([['$autocapture'], ['viewed']]);
    expect(page.body).toMatchObject({ hasMore: true, limit: 2, offset: 1 });
  });

  it('every filter type runs: person properties, cohorts, groups, elements and hogql', async () => {
    const run = (properties: unknown[]) =>
      query({
        query: {
          kind: 'HogQLQuery',
          query: 'select distinct event from events where {filters} order by event',
          filters: { properties },
        },
      });
    const pro = await run([{ key: 'plan', value: 'pro', type: 'person' }]);
    expect(pro.status, pro.text).toBe(200);
    expect(pro.body.results).toEqual([['$autocapture'], ['$identify'], ['viewed']]);
    const cohort = await run([{ key: 'id', value: 999_999, type: 'cohort' }]);
    expect(cohort.status, cohort.text).toBe(200);
    expect(cohort.body.results).toEqual([]);
    const group = await run([
      { key: 'industry', value: 'tech', type: 'group', group_type_index: 0 },
    ]);
    expect(group.status, group.text).toBe(200);
    expect(group.body.results).toEqual([]);
    const either = await run([
      {
        type: 'OR',
        values: [
          { key: 'tag_name', value: 'button', type: 'element' },
          { key: "event = 'bought'", type: 'hogql' },
        ],
      },
    ]);
    expect(either.status, either.text).toBe(200);
    expect(either.body.results).toEqual([['$autocapture'], ['bought']]);
  });

  it('a parse error is a 400 naming the position; a bad filter a 400 naming it', async () => {
    const bad = await query({ query: { kind: 'HogQLQuery', query: 'select from where' } });
    expectValidation(bad, 'query');
    expect(bad.body.detail).toMatch(/position \d+/);
    const filter = await query({
      query: {
        kind: 'HogQLQuery',
        query: 'select 1 from events where {filters}',
        filters: { properties: [{ key: 'x', type: 'session' }] },
      },
    });
    expectValidation(filter, 'properties');
    expect(filter.body.detail).toMatch(/"session" is not supported/);
  });

  it('an answer larger than 64 MiB is a 400 naming the limit, not the server’s memory', async () => {
    // 1,000 rows of 80 KB: within the row limit, over the byte budget
    const wide = await query({
      query: {
        kind: 'HogQLQuery',
        query: "select repeat('ab', 40000 + number % 2) from numbers(1000) limit 1000",
      },
    });
    expectValidation(wide, 'query');
    expect(wide.body.detail).toMatch(
      /larger than its limit of 64 MiB \(max_result_bytes; it reached/,
    );
    // the next query on the same session answers its own rows
    const next = await query({ query: { kind: 'HogQLQuery', query: 'select 1' } });
    expect([next.status, next.body.results]).toEqual([200, [[1]]]);
  });
});

describe('POST /query/ EventsQuery', () => {
  it("answers the events table's rows: * as the event object, person as the person, newest first", async () => {
    const res = await query({
      query: {
        kind: 'EventsQuery',
        select: ['*', 'event', 'person', 'properties.$browser'],
        after: 'all',
        where: ["event != '$identify'"],
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.columns).toEqual(['*', 'event', 'person', 'properties.$browser']);
    expect(res.body.results.map((r: unknown[]) => r[1])).toEqual([
      'bought',
      'viewed',
      'viewed',
      '$autocapture',
    ]);
    const clicked = res.body.results[3][0];
    expect(clicked.elements_chain).toContain('Sign up');
    expect(clicked.elements).toEqual([
      expect.objectContaining({ tag_name: 'button', text: 'Sign up', attr_class: ['cta'] }),
    ]);
    const [star, , person, browser] = res.body.results[0];
    expect(star).toMatchObject({
      event: 'bought',
      distinct_id: 'bo',
      team_id: t.projectId,
      properties: expect.objectContaining({ $browser: 'Firefox' }),
    });
    expect(typeof star.uuid).toBe('string');
    expect(person).toEqual({
      uuid: expect.any(String),
      created_at: expect.any(String),
      distinct_id: 'bo',
      properties: expect.objectContaining({ plan: 'free', $browser: 'Firefox' }),
    });
    expect(browser).toBe('Firefox');
    expect(res.body).toMatchObject({ hasMore: false, limit: 100, offset: 0 });
    expect(res.body.types).toHaveLength(4);
  });

  it('aggregates group by the other columns; event, properties and personId filter', async () => {
    const counts = await query({
      query: {
        kind: 'EventsQuery',
        select: ['event', 'count()'],
        after: '2024-01-01',
        orderBy: ['event'],
      },
    });
    expect(counts.status, counts.text).toBe(200);
    expect(counts.body.results).toEqual([
      ['$autocapture', 1],
      ['$identify', 1],
      ['bought', 1],
      ['viewed', 2],
    ]);
    const filtered = await query({
      query: {
        kind: 'EventsQuery',
        select: ['distinct_id', 'properties.n'],
        after: 'all',
        event: 'viewed',
        properties: [{ key: 'n', value: 5, operator: 'gt' }],
      },
    });
    const byElement = await query({
      query: {
        kind: 'EventsQuery',
        select: ['event'],
        after: 'all',
        properties: [{ key: 'text', value: 'Sign up', type: 'element' }],
      },
    });
    expect(byElement.body.results).toEqual([['$autocapture']]);
    // properties are text unless cast, as PostHog's untyped properties
    expect(filtered.body.results).toEqual([['bo', '7']]);
    const bo = await query({ query: { kind: 'PersonsNode', distinctId: 'bo' } });
    const byPerson = await query({
      query: {
        kind: 'EventsQuery',
        select: ['event'],
        after: 'all',
        personId: bo.body.results[0][1],
      },
    });
    expect(byPerson.body.results).toEqual([['bought'], ['viewed']]);
    // the default window is the last 24 hours: these 2024 events are outside it
    const recent = await query({ query: { kind: 'EventsQuery', select: ['event'] } });
    expect(recent.body.results).toEqual([]);
  });
});

describe('POST /query/ ActorsQuery, PersonsNode, DatabaseSchemaQuery, insights', () => {
  it('ActorsQuery lists persons with search and properties; person is the actor object', async () => {
    const all = await query({ query: { kind: 'ActorsQuery' } });
    expect(all.status, all.text).toBe(200);
    expect(all.body.columns).toEqual(['person', 'id', 'created_at']);
    expect(all.body.results).toHaveLength(2);
    const found = await query({ query: { kind: 'ActorsQuery', search: 'ana@' } });
    expect(found.body.results).toHaveLength(1);
    expect(found.body.results[0][0]).toMatchObject({
      distinct_ids: ['ana'],
      properties: { email: 'ana@example.com', plan: 'pro' },
      is_identified: expect.any(Boolean),
    });
    expect(found.body.results[0][0].id).toBe(found.body.results[0][1]);
    const free = await query({
      query: {
        kind: 'ActorsQuery',
        select: ['properties.plan'],
        properties: [{ key: 'plan', value: 'free', type: 'person' }],
      },
    });
    expect(free.body.results).toEqual([['free']]);
    expect(free.body.missing_actors_count).toBe(0);
  });

  it("a cohort's members: ActorsQuery/PersonsNode cohort, and a cohort filter on events", async () => {
    const created = await t.api('POST', `/api/projects/${t.projectId}/cohorts/`, {
      name: 'Pro',
      filters: {
        properties: { type: 'AND', values: [{ key: 'plan', type: 'person', value: 'pro' }] },
      },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id;
    for (let i = 0; i < 200; i++) {
      const c = (await t.api('GET', `/api/projects/${t.projectId}/cohorts/${id}/`)).body;
      if (!c.is_calculating && c.last_calculation) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const kind of ['ActorsQuery', 'PersonsNode']) {
      const members = await query({ query: { kind, cohort: id } });
      expect(members.status, members.text).toBe(200);
      expect(members.body.results.map((r: any[]) => r[0].distinct_ids)).toEqual([['ana']]);
    }
    const events = await query({
      query: {
        kind: 'EventsQuery',
        select: ['distinct_id', 'count()'],
        after: 'all',
        properties: [{ key: 'id', value: id, type: 'cohort' }],
      },
    });
    expect(events.body.results).toEqual([['ana', 3]]);
  });

  it('PersonsNode finds a person by distinct id', async () => {
    const res = await query({ query: { kind: 'PersonsNode', distinctId: 'bo' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r: any[]) => r[0].distinct_ids)).toEqual([['bo']]);
  });

  it('DatabaseSchemaQuery lists the tables HogQL knows', async () => {
    const res = await query({ query: { kind: 'DatabaseSchemaQuery' } });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body.tables)).toEqual(
      expect.arrayContaining([
        'events',
        'persons',
        'person_distinct_ids',
        'groups',
        'cohort_people',
      ]),
    );
  });

  it('an insight kind answers through the insight engine', async () => {
    const res = await query({
      query: {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: 'viewed', math: 'total' }],
        dateRange: { date_from: '2024-05-01', date_to: '2024-05-03' },
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results[0].count).toBe(2);
  });
});

describe('POST /query/ refusals', () => {
  it('an unknown kind is a 400 naming the kinds taken; a body without query a 400', async () => {
    const res = await query({ query: { kind: 'SessionsQuery' } });
    expectValidation(res, 'query');
    expect(res.body.detail).toMatch(/supported kinds: HogQLQuery, EventsQuery, ActorsQuery/);
    expectValidation(await query({}), 'query');
    expectValidation(await query({ query: { kind: 'EventsQuery', select: ['x', 3] } }), 'query');
  });

  it('bad fields of each kind are a 400 in the error shape, never a 5xx', async () => {
    const bad: unknown[] = [
      { kind: 'HogQLQuery', query: 42 },
      { kind: 'HogQLQuery', query: 'select 1', limit: 50_001 },
      { kind: 'HogQLQuery', query: 'select 1', values: 'x' },
      {
        kind: 'HogQLQuery',
        query: 'select 1 from events where {filters}',
        filters: { dateRange: { date_from: 5 } },
      },
      { kind: 'HogQLQuery', query: 'select nosuch from events' },
      { kind: 'EventsQuery', select: ['nosuch('] },
      { kind: 'EventsQuery', select: ['event'], where: ['1 +'] },
      { kind: 'EventsQuery', select: ['event'], orderBy: ['nosuch DESC'] },
      { kind: 'EventsQuery', select: ['event'], after: 'last tuesday' },
      { kind: 'EventsQuery', select: ['event'], actionId: 3 },
      { kind: 'EventsQuery', select: ['event'], properties: [{ key: 'n', operator: 'between' }] },
      { kind: 'ActorsQuery', orderBy: ['person'] },
      { kind: 'ActorsQuery', select: ['nosuch'] },
      { kind: 'ActorsQuery', properties: [{ key: 'x', value: 1, type: 'event' }] },
      { kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery' } },
      { kind: 'PersonsNode', cohort: 'one' },
    ];
    for (const q of bad) {
      const res = await query({ query: q });
      expect(res.status, `${JSON.stringify(q)} → ${res.text}`).toBe(400);
      expect(res.body).toMatchObject({ type: 'validation_error', detail: expect.any(String) });
    }
    const personId = await query({
      query: { kind: 'EventsQuery', select: ['event'], after: 'all', personId: 'no-such-person' },
    });
    expect(personId.status, personId.text).toBe(200);
    expect(personId.body.results).toEqual([]);
  });

  it('a key without query:read is refused with 403 naming the scope', async () => {
    const { key } = await newUser(t, { scopes: ['person:read', 'feature_flag:read'] });
    const res = await query({ query: { kind: 'DatabaseSchemaQuery' } }, key);
    expectError(res, 403);
    expect(res.body.detail).toMatch(/query:read/);
    const ok = await newUser(t, { scopes: ['query:read'] });
    expect((await query({ query: { kind: 'DatabaseSchemaQuery' } }, ok.key)).status).toBe(200);
  });
});
