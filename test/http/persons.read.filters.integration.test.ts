import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personEventTypes } from '../../commands/persons/model/personEvents.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectValidation, followPages, linkPath } from './helpers.ts';

/**
 * The persons list: every parameter and operator against a fixed population built by capture,
 * pagination links, property values and the CSV export (parsed back).
 */
let t: TestService;
const path = (query = '') => `/api/projects/${t.projectId}/persons/${query ? `?${query}` : ''}`;

// name → [created (day of March 2024), properties]; created_at orders the list (newest first)
const population: Record<string, [number, Record<string, unknown>]> = {
  ann: [
    1,
    { email: 'ann@Example.com', plan: 'pro', age: 31, signup: '2024-01-10T12:00:00Z', tags: ['a'] },
  ],
  bob: [2, { email: 'bob@example.org', plan: 'free', age: '9', signup: '2024-02-01' }],
  cat: [
    3,
    { email: 'cat@example.com', plan: 'pro', age: 45.5, vip: true, note: 'a,b "quoted"\nline' },
  ],
  dan: [4, { plan: 'free', age: 'unknown', signup: 'not a date', nil: null }],
  eve: [
    5,
    {
      email: 'EVE@EXAMPLE.COM',
      plan: 'enterprise',
      age: 100,
      signup: '2024-01-10T12:00:00.400+02:00',
    },
  ],
  fay: [6, { name: 'Fay', plan: 'pro' }],
};
const did = (name: string) => `${name}-did`;

beforeAll(async () => {
  t = await startTestService();
  const batch = Object.entries(population).map(([name, [day, props]]) => ({
    event: '$set',
    timestamp: `2024-03-0${day}T08:00:00.000Z`,
    properties: { distinct_id: did(name), $set: props },
  }));
  batch.push({
    event: '$pageview',
    timestamp: '2024-03-09T08:00:00.000Z',
    properties: { distinct_id: 'fay-anon', $set: {} },
  });
  await capture(t, batch);
  await capture(t, [
    { event: '$identify', properties: { distinct_id: did('fay'), $anon_distinct_id: 'fay-anon' } },
  ]);
  const [newest] = await t.service.ctx.store.readAll({
    direction: 'backwards',
    before: 'end',
    maxCount: 1,
    filter: { eventTypes: ['EventCaptured', ...personEventTypes] },
  });
  expect(await t.service.runners.get('persons')!.waitFor(newest!.position, 20_000)).toBe(true);
});
afterAll(async () => {
  await t?.close();
});

/** Names of the persons a query returns, in order; checks count agrees. */
async function names(query: string): Promise<string[]> {
  const res = await t.api('GET', path(query));
  expect(res.status, res.text).toBe(200);
  expect(res.body.count).toBe(res.body.results.length);
  return res.body.results.map((p: any) => p.distinct_ids[0].replace(/-did$/, ''));
}
const props = (filters: unknown) =>
  names(`properties=${encodeURIComponent(JSON.stringify(filters))}`);
const f = (key: string, operator: string | undefined, value?: unknown) => ({
  key,
  type: 'person',
  ...(operator ? { operator } : {}),
  ...(value !== undefined ? { value } : {}),
});

describe('list', () => {
  it('newest first, count always, absolute next/previous links', async () => {
    expect(await names('')).toEqual(['fay', 'eve', 'dan', 'cat', 'bob', 'ann']);
    const first = await t.api('GET', path('limit=4'));
    expect(first.body).toMatchObject({ count: 6, previous: null });
    expect(first.body.results).toHaveLength(4);
    expect(new URL(first.body.next).searchParams.get('offset')).toBe('4');
    const second = await t.api('GET', linkPath(t, first.body.next));
    expect(second.body.results.map((p: any) => p.distinct_ids[0])).toEqual([
      did('bob'),
      did('ann'),
    ]);
    expect(second.body).toMatchObject({ count: 6, next: null });
    expect(new URL(second.body.previous).searchParams.get('offset')).toBe('0');
    const pages = await followPages(t, path('limit=2&plan=ignored'));
    expect(pages.flatMap((p) => p.results.map((r: any) => r.id))).toHaveLength(6);
  });

  it('person objects: display name, merged ids, identified flag', async () => {
    const res = await t.api('GET', path(`distinct_id=fay-anon`));
    expect(res.body.results).toEqual([
      {
        id: expect.any(Number),
        name: 'Fay',
        distinct_ids: [did('fay'), 'fay-anon'],
        properties: expect.objectContaining({ name: 'Fay', plan: 'pro' }),
        is_identified: true,
        created_at: '2024-03-06T08:00:00.000Z',
        uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      },
    ]);
    expect((await t.api('GET', path(`distinct_id=${did('dan')}`))).body.results[0].name).toBe(
      did('dan'),
    );
  });

  it('distinct_id, email (exact) and search (email substring, distinct id or uuid)', async () => {
    expect(await names(`distinct_id=${did('bob')}`)).toEqual(['bob']);
    expect(await names('distinct_id=nobody')).toEqual([]);
    expect(await names('email=cat@example.com')).toEqual(['cat']);
    expect(await names('email=CAT@example.com')).toEqual([]);
    expect(await names('search=EXAMPLE.COM')).toEqual(['eve', 'cat', 'ann']);
    expect(await names(`search=${did('dan')}`)).toEqual(['dan']);
    expect(await names('search=dan-d')).toEqual([]);
    const uuid = (await t.api('GET', path(`distinct_id=${did('bob')}`))).body.results[0].uuid;
    expect(await names(`search=${uuid}`)).toEqual(['bob']);
    expect(await names('search=%25')).toEqual([]);
    expect(await names('search=example&email=ann@Example.com')).toEqual(['ann']);
  });

  it.each([
    [[f('plan', undefined, 'pro')], ['fay', 'cat', 'ann']],
    [[f('plan', 'exact', ['free', 'enterprise'])], ['eve', 'dan', 'bob']],
    [[f('vip', 'exact', true)], ['cat']],
    [[f('age', 'exact', 31)], ['ann']],
    [[f('plan', 'is_not', 'pro')], ['eve', 'dan', 'bob']],
    [[f('email', 'is_not', ['bob@example.org'])], ['fay', 'eve', 'dan', 'cat', 'ann']],
    [[f('email', 'icontains', 'EXAMPLE.com')], ['eve', 'cat', 'ann']],
    [[f('email', 'not_icontains', 'example.com')], ['fay', 'dan', 'bob']],
    [[f('email', 'regex', '^[b-c].*\\.(com|org)$')], ['cat', 'bob']],
    [[f('email', 'not_regex', '^[a-c]')], ['fay', 'eve', 'dan']],
    [[f('age', 'gt', 31)], ['eve', 'cat']],
    [[f('age', 'gte', '31')], ['eve', 'cat', 'ann']],
    [[f('age', 'lt', 10)], ['bob']],
    [[f('age', 'lte', 100)], ['eve', 'cat', 'bob', 'ann']],
    [[f('email', 'is_set')], ['eve', 'cat', 'bob', 'ann']],
    [[f('nil', 'is_set')], []],
    [[f('email', 'is_not_set')], ['fay', 'dan']],
    [[f('signup', 'is_date_before', '2024-01-31')], ['eve', 'ann']],
    [[f('signup', 'is_date_after', '2024-01-10T11:00:00Z')], ['bob', 'ann']],
    [[f('signup', 'is_date_exact', '2024-01-10T10:00:00Z')], ['eve']],
    [[f('signup', 'is_date_after', '-1d')], []],
    [
      [f('plan', 'exact', 'pro'), f('email', 'is_set')],
      ['cat', 'ann'],
    ],
    [
      {
        type: 'OR',
        values: [
          f('plan', 'exact', 'enterprise'),
          { type: 'AND', values: [f('plan', 'exact', 'pro'), f('age', 'gt', 40)] },
        ],
      },
      ['eve', 'cat'],
    ],
    [
      [f('plan', 'exact', 'pro'), { key: '$browser', value: 'x', type: 'event' }],
      ['fay', 'cat', 'ann'],
    ],
    [[{ key: 'plan', value: 'free' }], ['dan', 'bob']],
    [[], ['fay', 'eve', 'dan', 'cat', 'bob', 'ann']],
  ])('properties %j → %j', async (filters, expected) => {
    expect(await props(filters)).toEqual(expected);
  });

  it('keys and values are parameters: quotes and SQL in them are plain text', async () => {
    expect(await props([f("email') OR true; DROP TABLE persons; --", 'is_set')])).toEqual([]);
    expect(await props([f('plan', 'exact', "pro' OR '1'='1")])).toEqual([]);
    expect(await names('')).toHaveLength(6);
  });

  it('bad filters → 400 naming properties', async () => {
    for (const raw of [
      'not json',
      JSON.stringify([f('plan', 'nearly', 'x')]),
      JSON.stringify([f('email', 'regex', '(')]),
      JSON.stringify([f('age', 'gt', 'abc')]),
      JSON.stringify([f('signup', 'is_date_before', 'someday')]),
      JSON.stringify([{ value: 'x' }]),
      JSON.stringify([f('plan', 'exact')]),
      JSON.stringify(['x']),
    ]) {
      const res = await t.api('GET', path(`properties=${encodeURIComponent(raw)}`));
      expectValidation(res, 'properties');
    }
    expectValidation(await t.api('GET', path('limit=0')), 'limit');
    // over the maximum is a 400, not a page silently shorter than asked
    expectValidation(await t.api('GET', path('limit=1001')), 'limit');
    expectValidation(await t.api('GET', path('format=csv&limit=100001')), 'limit');
    expect((await t.api('GET', path('limit=1000'))).status).toBe(200);
    expectValidation(await t.api('GET', path('format=xml')), 'format');
  });
});

describe('values', () => {
  it('distinct values with counts, most frequent first, optionally containing value', async () => {
    const res = await t.api('GET', `/api/projects/${t.projectId}/persons/values/?key=plan`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual([
      { name: 'pro', count: 3 },
      { name: 'free', count: 2 },
      { name: 'enterprise', count: 1 },
    ]);
    expect(
      (await t.api('GET', `/api/projects/${t.projectId}/persons/values/?key=plan&value=E`)).body,
    ).toEqual([
      { name: 'free', count: 2 },
      { name: 'enterprise', count: 1 },
    ]);
    expect(
      (await t.api('GET', `/api/projects/${t.projectId}/persons/values/?key=age`)).body
        .map((v: any) => v.name)
        .sort(),
    ).toEqual(['100', '31', '45.5', '9', 'unknown']);
    expect(
      (await t.api('GET', `/api/projects/${t.projectId}/persons/values/?key=missing`)).body,
    ).toEqual([]);
    expectValidation(await t.api('GET', `/api/projects/${t.projectId}/persons/values/`), 'key');
  });
});

/** RFC 4180, as a spreadsheet reads it (csv-parse). */
const parseCsv = (text: string): string[][] =>
  parse(text, { relax_column_count: true }) as string[][];

describe('CSV', () => {
  it('the list as CSV: fixed columns, then properties.<key>; filters and paging apply', async () => {
    const res = await fetch(`${t.url}${path('format=csv')}`, {
      headers: { authorization: `Bearer ${t.personalApiKey}` },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const [header, ...rows] = parseCsv(await res.text());
    const keys = [
      '$creator_event_uuid',
      'age',
      'email',
      'name',
      'nil',
      'note',
      'plan',
      'signup',
      'tags',
      'vip',
    ];
    expect(header).toEqual([
      'id',
      'uuid',
      'name',
      'distinct_ids',
      'is_identified',
      'created_at',
      ...keys.map((k) => `properties.${k}`),
    ]);
    expect(rows).toHaveLength(6);
    const json = (await t.api('GET', path())).body.results;
    rows.forEach((row, i) => {
      const record = Object.fromEntries(header!.map((h, j) => [h, row[j]]));
      const p = json[i];
      expect(record).toMatchObject({
        id: String(p.id),
        uuid: p.uuid,
        name: p.name,
        distinct_ids: JSON.stringify(p.distinct_ids),
        is_identified: String(p.is_identified),
        created_at: p.created_at,
      });
      for (const k of keys) {
        const v = p.properties[k];
        expect(record[`properties.${k}`], `${p.name} ${k}`).toBe(
          v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v),
        );
      }
    });
    const cat = rows.find((r) => r[3] === JSON.stringify([did('cat')]))!;
    expect(cat[header!.indexOf('properties.note')]).toBe('a,b "quoted"\nline');

    const filtered = await fetch(
      `${t.url}${path(`format=csv&limit=1&offset=1&properties=${encodeURIComponent(JSON.stringify([f('plan', 'exact', 'pro')]))}`)}`,
      { headers: { authorization: `Bearer ${t.personalApiKey}` } },
    );
    const [h2, ...only] = parseCsv(await filtered.text());
    expect(only).toHaveLength(1);
    expect(only[0]![h2!.indexOf('distinct_ids')]).toBe(JSON.stringify([did('cat')]));
    expect(h2).not.toContain('properties.tags'); // columns are the keys of the exported persons only
  });

  it('one person as CSV', async () => {
    const p = (await t.api('GET', path(`distinct_id=${did('ann')}`))).body.results[0];
    const res = await fetch(`${t.url}/api/projects/${t.projectId}/persons/${p.id}/?format=csv`, {
      headers: { authorization: `Bearer ${t.personalApiKey}` },
    });
    const [header, row, ...rest] = parseCsv(await res.text());
    expect(rest).toEqual([]);
    expect(Object.fromEntries(header!.map((h, i) => [h, row![i]]))).toMatchObject({
      id: String(p.id),
      'properties.tags': '["a"]',
      'properties.age': '31',
      'properties.email': 'ann@Example.com',
    });
  });
});
