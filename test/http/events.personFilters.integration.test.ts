import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { likeToRegex, splitPropertyFilters } from '../../queries/events/eventPersonFilters.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectValidation } from './helpers.ts';

let t: TestService;

const at = (minute: number) => `2024-06-01T10:${String(minute).padStart(2, '0')}:00Z`;
/** Newest first, each `distinct_id:event`. */
const ALL = [
  'alice:y',
  'erin:y',
  'erin:$identify',
  'ghost:x',
  'dave:x',
  'carol:y',
  'bob:x',
  'alice:x',
  'anon-1:x',
];

beforeAll(async () => {
  t = await startTestService();
  const batch = [
    { event: 'x', properties: { distinct_id: 'anon-1', channel: 'web' }, timestamp: at(0) },
    {
      event: 'x',
      properties: {
        distinct_id: 'alice',
        channel: 'web',
        $set: { email: 'alice@example.com', plan: 'pro', age: 35, $tier: 'gold' },
      },
      timestamp: at(1),
    },
    {
      event: 'x',
      properties: {
        distinct_id: 'bob',
        channel: 'web',
        $set: { email: 'bob@example.com', plan: 'free', age: 25 },
      },
      timestamp: at(2),
    },
    {
      event: 'y',
      properties: {
        distinct_id: 'carol',
        channel: 'web',
        $set: { email: 'carol@example.org', plan: 'pro', age: 28 },
      },
      timestamp: at(3),
    },
    { event: 'x', properties: { distinct_id: 'dave', channel: 'app' }, timestamp: at(4) },
    {
      event: 'x',
      properties: { distinct_id: 'ghost', channel: 'app', $process_person_profile: false },
      timestamp: at(5),
    },
    // anon-1 is identified into erin: one person, erin's properties
    {
      event: '$identify',
      properties: {
        distinct_id: 'erin',
        $anon_distinct_id: 'anon-1',
        $set: { email: 'erin@example.com', plan: 'team', age: 41 },
      },
      timestamp: at(6),
    },
    { event: 'y', properties: { distinct_id: 'erin', channel: 'app' }, timestamp: at(7) },
    { event: 'y', properties: { distinct_id: 'alice', channel: 'app' }, timestamp: at(8) },
  ];
  await capture(t, batch);
});
afterAll(async () => t?.close());

const path = (query: Record<string, string>) =>
  `/api/projects/${t.projectId}/events/?${new URLSearchParams(query)}`;
const labels = async (query: Record<string, string>): Promise<string[]> => {
  const res = await t.api('GET', path(query));
  expect(res.status, res.text).toBe(200);
  return res.body.results.map(
    (e: { distinct_id: string; event: string }) => `${e.distinct_id}:${e.event}`,
  );
};
const byProperties = (properties: unknown) => labels({ properties: JSON.stringify(properties) });
const byWhere = (...where: string[]) => labels({ where: JSON.stringify(where) });
const person = (key: string, value?: unknown, operator = 'exact') => ({
  key,
  type: 'person',
  operator,
  ...(value !== undefined ? { value } : {}),
});
const bad = async (query: Record<string, string>, attr: string): Promise<string> => {
  const res = await t.api('GET', path(query));
  expectValidation(res, attr, 'invalid_input');
  return res.body.detail as string;
};

describe('properties filters of type person', () => {
  it('sees every event without filters', async () => {
    expect(await labels({})).toEqual(ALL);
  });

  it('keeps the events of the persons matching a person filter', async () => {
    expect(await byProperties([person('plan', 'pro')])).toEqual(['alice:y', 'carol:y', 'alice:x']);
    expect(await byProperties([person('age', 30, 'gt')])).toEqual([
      'alice:y',
      'erin:y',
      'erin:$identify',
      'alice:x',
      'anon-1:x',
    ]);
    expect(await byProperties([person('email', 'EXAMPLE.ORG', 'icontains')])).toEqual(['carol:y']);
    expect(await byProperties([person('plan', ['free', 'team'])])).toEqual([
      'erin:y',
      'erin:$identify',
      'bob:x',
      'anon-1:x',
    ]);
  });

  it('ANDs person and event filters of a flat list', async () => {
    expect(await byProperties([person('plan', 'pro'), { key: 'channel', value: 'web' }])).toEqual([
      'carol:y',
      'alice:x',
    ]);
    expect(await byProperties([{ key: 'channel', value: 'app' }, person('plan', 'pro')])).toEqual([
      'alice:y',
    ]);
    expect(
      await labels({ properties: JSON.stringify([person('plan', 'pro')]), event: 'x' }),
    ).toEqual(['alice:x']);
  });

  it('is_not_set / is_not match persons without the property and events without a person', async () => {
    expect(await byProperties([person('plan', undefined, 'is_not_set')])).toEqual([
      'ghost:x',
      'dave:x',
    ]);
    expect(await byProperties([person('plan', 'pro', 'is_not')])).toEqual([
      'erin:y',
      'erin:$identify',
      'ghost:x',
      'dave:x',
      'bob:x',
      'anon-1:x',
    ]);
    expect(await byProperties([person('plan', undefined, 'is_set')])).toEqual([
      'alice:y',
      'erin:y',
      'erin:$identify',
      'carol:y',
      'bob:x',
      'alice:x',
      'anon-1:x',
    ]);
  });

  it('supports AND groups mixing both kinds, and OR groups of one kind', async () => {
    expect(
      await byProperties({
        type: 'AND',
        values: [person('plan', 'pro'), person('age', 30, 'gt'), { key: 'channel', value: 'app' }],
      }),
    ).toEqual(['alice:y']);
    const orOfPersons = { type: 'OR', values: [person('plan', 'free'), person('age', 40, 'gt')] };
    expect(
      await byProperties({ type: 'AND', values: [orOfPersons, { key: 'channel', value: 'web' }] }),
    ).toEqual(['bob:x', 'anon-1:x']);
    expect(
      await byProperties({
        type: 'OR',
        values: [
          { key: 'channel', value: 'app' },
          { key: 'channel', value: 'none' },
        ],
      }),
    ).toEqual(['alice:y', 'erin:y', 'ghost:x', 'dave:x']);
    expect(
      await byProperties([
        {
          type: 'AND',
          values: [
            person('plan', 'pro'),
            { type: 'AND', values: [{ key: 'channel', value: 'web' }] },
          ],
        },
      ]),
    ).toEqual(['carol:y', 'alice:x']);
  });

  it('answers 400 for an OR group mixing person and event filters, and for bad person filters', async () => {
    const mixed = {
      type: 'AND',
      values: [
        { key: 'channel', value: 'web' },
        { type: 'OR', values: [person('plan', 'pro'), { key: 'channel', value: 'app' }] },
      ],
    };
    expect(await bad({ properties: JSON.stringify(mixed) }, 'properties')).toMatch(
      /^properties\.values\[1\]: an OR group mixing person and event filters is not supported/,
    );
    expect(
      await bad(
        {
          properties: JSON.stringify([
            { key: 'channel', value: 'web' },
            person('age', 'old', 'gt'),
          ]),
        },
        'properties',
      ),
    ).toMatch(/^properties\[1\]\.value: gt needs a number/);
    expect(
      await bad({ properties: JSON.stringify([person('plan', 'x', 'semver_gt')]) }, 'properties'),
    ).toMatch(/"semver_gt" is not supported/);
    expect(
      await bad({ properties: JSON.stringify([person('plan', '(', 'regex')]) }, 'properties'),
    ).toMatch(/invalid regular expression/);
  });

  it('matches the events of every distinct id of a merged person with its properties', async () => {
    expect(await byProperties([person('plan', 'team')])).toEqual([
      'erin:y',
      'erin:$identify',
      'anon-1:x',
    ]);
    expect(
      await byProperties([person('email', 'erin@example.com'), { key: 'channel', value: 'web' }]),
    ).toEqual(['anon-1:x']);
  });

  it('splits person filters out, leaving the others at their paths', () => {
    const split = splitPropertyFilters([
      { key: 'a', value: 1 },
      person('p', 2),
      { type: 'OR', values: [person('q', 3)] },
    ]);
    expect(split.properties).toEqual([
      { key: 'a', value: 1 },
      { type: 'AND', values: [] },
      { type: 'AND', values: [] },
    ]);
    expect(split.person.map((p) => p.path)).toEqual(['properties[1]', 'properties[2]']);
    expect(splitPropertyFilters([{ key: 'a', value: 1 }]).person).toEqual([]);
    // the 100-filter limit counts each filter once, person filters included
    const many = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        i % 2 ? person(`p${i}`, 1) : { key: `e${i}`, value: 1 },
      );
    expect(splitPropertyFilters(many(100)).person).toHaveLength(50);
    expect(() => splitPropertyFilters(many(101))).toThrow(/more than 100 filters/);
    expect(likeToRegex('a%b_c\\%.', false)).toBe('^a.*b.c%\\.$');
    expect(likeToRegex('%X%', true)).toBe('(?i)^.*X.*$');
  });
});

describe('HogQL where on person.properties', () => {
  it('resolves a person comparison', async () => {
    expect(await byWhere("person.properties.plan = 'pro'")).toEqual([
      'alice:y',
      'carol:y',
      'alice:x',
    ]);
    expect(await byWhere("person.properties.`plan` = 'pro'")).toEqual([
      'alice:y',
      'carol:y',
      'alice:x',
    ]);
    expect(await byWhere("person.properties['$tier'] = 'gold'")).toEqual(['alice:y', 'alice:x']);
    expect(await byWhere("person.properties.`$tier` = 'gold'")).toEqual(['alice:y', 'alice:x']);
    expect(await byWhere('person.properties.age = 35')).toEqual(['alice:y', 'alice:x']);
    expect(await byWhere("'pro' = person.properties.plan")).toEqual([
      'alice:y',
      'carol:y',
      'alice:x',
    ]);
  });

  it('ANDs person and event conditions, within an item and across items', async () => {
    expect(await byWhere("person.properties.age > 30 and event = 'x'")).toEqual([
      'alice:x',
      'anon-1:x',
    ]);
    expect(await byWhere('person.properties.age > 30', "event = 'x'")).toEqual([
      'alice:x',
      'anon-1:x',
    ]);
    expect(
      await byWhere(
        "(person.properties.age >= 25 and person.properties.age <= 35) and properties.channel = 'web'",
      ),
    ).toEqual(['carol:y', 'bob:x', 'alice:x']);
    expect(await byWhere('30 < person.properties.age', "person.properties.plan != 'team'")).toEqual(
      ['alice:y', 'alice:x'],
    );
  });

  it('maps each operator', async () => {
    expect(await byWhere("person.properties.plan != 'pro'")).toEqual([
      'erin:y',
      'erin:$identify',
      'ghost:x',
      'dave:x',
      'bob:x',
      'anon-1:x',
    ]);
    expect(await byWhere('person.properties.age < 28')).toEqual(['bob:x']);
    expect(await byWhere('person.properties.age <= 28')).toEqual(['carol:y', 'bob:x']);
    expect(await byWhere("person.properties.email like '%@example.org'")).toEqual(['carol:y']);
    expect(await byWhere("person.properties.email like '%@EXAMPLE.org'")).toEqual([]);
    expect(await byWhere("person.properties.email ilike 'B_B@%'")).toEqual(['bob:x']);
    expect(await byWhere("person.properties.email not ilike '%.com'")).toEqual([
      'ghost:x',
      'dave:x',
      'carol:y',
    ]);
    expect(await byWhere("person.properties.plan in ('free', 'team')")).toEqual([
      'erin:y',
      'erin:$identify',
      'bob:x',
      'anon-1:x',
    ]);
    expect(await byWhere('person.properties.age in (25, 28)')).toEqual(['carol:y', 'bob:x']);
    expect(await byWhere("person.properties.plan not in ('pro', 'team')")).toEqual([
      'ghost:x',
      'dave:x',
      'bob:x',
    ]);
    expect(await byWhere('person.properties.email is null')).toEqual(['ghost:x', 'dave:x']);
    expect(await byWhere('person.properties.email is not null', "event = 'y'")).toEqual([
      'alice:y',
      'erin:y',
      'carol:y',
    ]);
    expect(await byWhere('person.properties.plan = null')).toEqual(['ghost:x', 'dave:x']);
  });

  it('matches the events of every distinct id of a merged person', async () => {
    expect(await byWhere("person.properties.plan = 'team'")).toEqual([
      'erin:y',
      'erin:$identify',
      'anon-1:x',
    ]);
    expect(
      await byWhere("person.properties.email = 'erin@example.com'", "distinct_id = 'anon-1'"),
    ).toEqual(['anon-1:x']);
  });

  it('works with select, and together with properties filters', async () => {
    const res = await t.api(
      'GET',
      path({
        select: JSON.stringify(['count()']),
        where: JSON.stringify(["person.properties.plan = 'pro'"]),
      }),
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.results).toEqual([[3]]);
    expect(
      await labels({
        where: JSON.stringify(['person.properties.age > 30']),
        properties: JSON.stringify([person('plan', 'pro'), { key: 'channel', value: 'web' }]),
      }),
    ).toEqual(['alice:x']);
  });

  it('answers 400 for person.properties anywhere else, naming it', async () => {
    const where = (...w: string[]) => ({ where: JSON.stringify(w) });
    expect(await bad(where("person.properties.plan = 'pro' or event = 'x'"), 'where')).toMatch(
      /^where "person.properties.plan = 'pro' or event = 'x'": Unsupported use of "person.properties.plan": person properties are supported in where only/,
    );
    expect(await bad(where("not person.properties.plan = 'pro'"), 'where')).toMatch(
      /Unsupported use of "person.properties.plan"/,
    );
    expect(await bad(where("lower(person.properties.plan) = 'pro'"), 'where')).toMatch(
      /Unsupported use of "person.properties.plan"/,
    );
    expect(await bad(where('person.properties.age + 1 > 30'), 'where')).toMatch(
      /Unsupported use of "person.properties.age"/,
    );
    expect(await bad({ select: JSON.stringify(['person.properties.plan']) }, 'select')).toMatch(
      /Unsupported use of "person.properties.plan"/,
    );
    expect(await bad({ orderBy: JSON.stringify(['person.properties.plan']) }, 'orderBy')).toMatch(
      /Unsupported use of "person.properties.plan"/,
    );
    expect(await bad(where("person.properties.plan > 'a'"), 'where')).toMatch(
      /ordering comparisons of person properties need a number/,
    );
    expect(await bad(where('person.properties.plan = event'), 'where')).toMatch(
      /can only be compared with a constant/,
    );
    expect(await bad(where("person.properties.a.b = 'x'"), 'where')).toMatch(
      /nested person properties are not supported/,
    );
    expect(await bad(where('person.id = 1'), 'where')).toMatch(/Unsupported field "person.id"/);
    expect(
      await bad(
        { properties: JSON.stringify([{ type: 'hogql', key: "person.properties.plan = 'pro'" }]) },
        'properties',
      ),
    ).toMatch(/Unsupported use of "person.properties.plan"/);
  });
});
