import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HogQLError, runHogQL } from '../../../projections/hogql/index.ts';
import { type ClickHouse, openClickHouse } from '../../../src/runtime/clickhouse.ts';
import { startTestService, type TestService } from '../../support/testService.ts';
import { type SeededProject, seedTwoProjects } from '../../support/twoProjects.ts';

let t: TestService;
let ch: ClickHouse;
let a: SeededProject;
let b: SeededProject;

beforeAll(async () => {
  t = await startTestService();
  ({ a, b } = await seedTwoProjects(t));
  // the service's own chDB session (one per process), on its database
  ch = await openClickHouse(undefined, t.config.chdbPath, t.config.clickhouseDatabase);
}, 120_000);
afterAll(async () => {
  await ch?.close();
  await t?.close();
});

const run = (query: string, extra: Record<string, unknown> = {}, project = a) =>
  runHogQL({ ch, pool: t.service.stores.pool }, { projectId: project.projectId, query, ...extra });

describe('runHogQL on seeded projects', () => {
  it('counts the project’s own events, names columns and types as PostHog', async () => {
    const r = await run('select count() as c, uniq(distinct_id) from events');
    expect(r.results).toEqual([[a.counts.events, 5]]);
    expect(r.columns).toEqual(['c', 'uniq(distinct_id)']);
    expect(r.types).toEqual([
      ['c', 'UInt64'],
      ['uniq(distinct_id)', 'UInt64'],
    ]);
    expect(r.hasMore).toBe(false);
    expect(r.limit).toBe(100);
    expect((await run('select count() from events', {}, b)).results).toEqual([[b.counts.events]]);
  });
});

const rows = async (query: string, extra: Record<string, unknown> = {}, project = a) =>
  (await run(query, extra, project)).results;

describe('HogQL over events, persons, pdi, groups and cohorts', () => {
  it('reads each table of the project only', async () => {
    for (const p of [a, b]) {
      const r = await rows(
        `select (select count() from events), (select count() from persons),
                (select count() from person_distinct_ids), (select count() from groups),
                (select count() from cohort_people)`,
        {},
        p,
      );
      const c = p.counts;
      expect(r).toEqual([[c.events, c.persons, c.distinctIds, c.groups, c.cohortPeople]]);
    }
  });

  it('resolves properties, person and pdi on events, after merges', async () => {
    expect(
      await rows(
        `select properties.$browser, properties['$browser'], person.properties.email, pdi.distinct_id
           from events where distinct_id = 'anon-shared'`,
      ),
    ).toEqual([['Chrome', 'Chrome', 'shared-1@mark_a.example', 'anon-shared']]);
    // the anonymous id's event belongs to shared-1's person now
    expect(
      await rows(`select uniq(person_id), uniq(person.id) from events
                  where distinct_id in ('anon-shared', 'shared-1')`),
    ).toEqual([[1, 1]]);
  });

  it('joins tables explicitly (INNER, LEFT, USING) and in subqueries', async () => {
    expect(
      await rows(`select e.event, p.properties.email from events e
                  inner join persons p on p.id = e.person_id
                  where e.distinct_id = 'shared-1' order by e.timestamp`),
    ).toEqual([
      ['$identify', 'shared-1@mark_a.example'],
      ['$pageview', 'shared-1@mark_a.example'],
    ]);
    expect(
      await rows(`select count() from cohort_people c left join persons p on p.id = c.person_id
                  where p.properties.mark = 'MARK_A'`),
    ).toEqual([[a.counts.cohortPeople]]);
    expect(
      await rows(`select count() from (select distinct_id from events) e
                  inner join person_distinct_ids using (distinct_id)`),
    ).toEqual([[a.counts.events - 1]]);
  });

  it('names a field’s column after it, so subqueries can use it; persons.pdi is one row per id', async () => {
    const r = await run(`select person_id, properties.mark from events where event = 'only'`);
    expect(r.columns).toEqual(['person_id', 'mark']);
    expect(
      await rows(`select e.m, p.properties.mark from (select person_id, properties.mark as m from events
                  where event = 'only') e join (select id, properties from persons) p on e.person_id = p.id`),
    ).toEqual([['MARK_A', 'MARK_A']]);
    // virtual fields selected in a subquery or CTE are its columns under their HogQL names
    const joined = await rows(`select e.m, p.properties from (select person_id, properties.mark as m
      from events where event = 'only') e join (select id, properties from persons) p on e.person_id = p.id`);
    expect([joined[0]![0], JSON.parse(String(joined[0]![1])).mark]).toEqual(['MARK_A', 'MARK_A']);
    expect(
      await rows(`with x as (select person_id, pdi.person_id, person.properties.email, properties.mark
                  from events where distinct_id = 'shared-1' and event = '$identify')
                  select x.email, x.mark, x.person_id = x.\`pdi.person_id\` from x`),
    ).toEqual([['shared-1@mark_a.example', 'MARK_A', 1]]);
    expect(
      await rows(`select pdi.distinct_id from persons
                  where properties.email = 'shared-1@mark_a.example' order by pdi.distinct_id`),
    ).toEqual([['anon-shared'], ['shared-1']]);
  });

  it('runs window functions, CTEs, UNION ALL, lambdas and intervals', async () => {
    expect(
      await rows(`select event, row_number() over (partition by distinct_id order by timestamp) as n
                  from events where distinct_id = 'shared-1' order by n`),
    ).toEqual([
      ['$identify', 1],
      ['$pageview', 2],
    ]);
    expect(
      await rows(`with o as (select distinct_id from events where event = 'only')
                  select count() from o`),
    ).toEqual([[1]]);
    expect(
      await rows(`select x from (select 1 as x union all select 2 as x
                  union all select count() from events where event = 'only') order by x`),
    ).toEqual([[1], [1], [2]]);
    expect(
      await rows(
        'select arrayMap(x -> x * 2, [1, 2, 3]), arrayFilter((x, y) -> y, [1, 2], [0, 1])',
      ),
    ).toEqual([[[2, 4, 6], [2]]]);
    expect(
      await rows(`select count() from events
                  where timestamp > now() - interval 1 day and toStartOfDay(timestamp) <= now()`),
    ).toEqual([[a.counts.events]]);
  });

  it('adds WITH TOTALS rows, placeholders and {filters}', async () => {
    expect(
      await rows(`select event, count() from events where event in ('only', '$identify')
                  group by event with totals order by event`),
    ).toEqual([
      ['$identify', 1],
      ['only', 1],
      ['', 2],
    ]);
    expect(
      await rows('select count() from events where event = {ev} and 1 in {ns}', {
        values: { ev: 'only', ns: [1, 2] },
      }),
    ).toEqual([[1]]);
    expect(
      await rows('select count() from events where {filters}', {
        filtersExpr: "properties.$browser = 'Safari'",
      }),
    ).toEqual([[1]]);
    expect(await rows('select count() from events where {filters}')).toEqual([[a.counts.events]]);
  });

  it('pages with LIMIT: 100 by default, at most 50,000, hasMore from one more row', async () => {
    const first = await run('select number from numbers(1000)');
    expect([first.results.length, first.hasMore, first.limit]).toEqual([100, true, 100]);
    const page = await run('select number from numbers(5) order by number', {
      limit: 2,
      offset: 2,
    });
    expect([page.results, page.hasMore]).toEqual([[[2], [3]], true]);
    const asked = await run('select number from numbers(5) limit 10');
    expect([asked.results.length, asked.hasMore, asked.limit]).toEqual([5, false, 10]);
    const capped = await run('select number from numbers(60000) limit 60000');
    expect([capped.results.length, capped.hasMore, capped.limit]).toEqual([50_000, true, 50_000]);
  });

  it('answers times as ISO 8601 and never shows the Postgres password', async () => {
    const r = await run(
      "select timestamp, person.properties.email from events where event = 'only'",
    );
    expect(String(r.results[0]![0])).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/);
    const password = new URL(t.config.databaseUrl!).password;
    expect(r.clickhouse).toContain('postgresql(');
    if (password) expect(r.clickhouse).not.toContain(password);
  });

  it('refuses what it must with a 400 naming it', async () => {
    const refused = async (query: string, message: RegExp) => {
      const error = await run(query).catch((e: unknown) => e);
      expect(error, query).toBeInstanceOf(HogQLError);
      expect((error as Error).message, query).toMatch(message);
    };
    await refused("select * from file('/etc/passwd')", /Unknown table function: file/);
    await refused("select * from url('http://x', 'CSV')", /Unknown table function: url/);
    await refused('select * from system.tables', /Unknown table: system\.tables/);
    await refused('select * from person_distinct_id', /Unknown table: person_distinct_id/);
    await refused('select sleep(3)', /Unsupported function: sleep/);
    await refused("select 'abc", /SyntaxError.*position/);
    await refused('select nope from events', /UNKNOWN_IDENTIFIER/);
    await refused('select person.nope from events', /Field not found: person\.nope/);
    await refused('select {missing}', /Placeholder \{missing\} has no value/);
  });
});
