import { describe, expect, it } from 'vitest';
import { compileHogQL, HogQLError } from '../../../projections/hogql/index.ts';
import { postgresInClickHouse } from '../../../projections/hogql/tables.ts';
import type { ClickHouse } from '../../../src/runtime/clickhouse.ts';

/** The printer only reads the database's name from ClickHouse: nothing runs here. */
const deps = {
  ch: { database: 'db' } as ClickHouse,
  postgres: postgresInClickHouse('postgres://u:secret@127.0.0.1:5432/app'),
};
const sql = async (query: string, extra: Record<string, unknown> = {}) =>
  (await compileHogQL(deps, { projectId: 7, query, ...extra })).sql;
const refused = async (query: string, message: RegExp, extra: Record<string, unknown> = {}) => {
  const error = await sql(query, extra).catch((e: unknown) => e);
  expect(error, query).toBeInstanceOf(HogQLError);
  expect((error as Error).message, query).toMatch(message);
  return error as HogQLError;
};

/** Every read of a table, with the project it is restricted to. */
const tableReads = (text: string) =>
  [
    ...text.matchAll(
      /FROM (db\.\w+|postgresql\([^)]*'(\w+)', 'u'[^)]*\))(?: AS \w+)?(?: LEFT JOIN| WHERE ([^ ]+ = \d+)| GROUP|\))/g,
    ),
  ].map((m) => m[0]);

describe('HogQL printer', () => {
  it('prints a SELECT over the project’s events with the outer LIMIT', async () => {
    expect(await sql("select event, count() from events where event = 'x' group by event")).toBe(
      "SELECT events.event, count() FROM (SELECT * FROM db.events WHERE team_id = 7) AS events WHERE (events.event = 'x') GROUP BY events.event LIMIT 101",
    );
    expect(await sql('select 1 limit 5 offset 10')).toBe('SELECT 1 LIMIT 6 OFFSET 10');
    expect(await sql('select 1', { limit: 70_000 })).toBe('SELECT 1 LIMIT 50001');
  });

  it('restricts every table reference to the project: joins, subqueries, CTEs, union arms, lazy joins', async () => {
    const text = await sql(`
      with c as (select person_id from cohort_people)
      select e.event, person.properties.email, p.properties.name, g.key
        from events e
        left join persons p on p.id = e.person_id
        left join groups g on g.key = e.$group_0
       where e.distinct_id in (select distinct_id from person_distinct_ids)
         and e.person_id in c
      union all select event, '', '', '' from events`);
    // every table name printed is followed by its project's condition, and nothing reads unscoped
    const reads = text.match(/db\.(events|person_distinct_id)\b[^()]*?(WHERE|GROUP|LEFT)/g) ?? [];
    expect(reads.length).toBeGreaterThanOrEqual(4);
    for (const read of text.matchAll(
      /FROM db\.(\w+)(?: AS __e)?(?: LEFT JOIN \((?:[^()]|\([^()]*\))*\) AS __pdi ON [^W]*)? WHERE (?:__e\.)?team_id = (\d+)/g,
    ))
      expect(read[2]).toBe('7');
    expect(text.match(/FROM db\.\w+/g)!.length).toBe(text.match(/team_id = 7/g)!.length);
    expect(text.match(/postgresql\(/g)!.length).toBe(
      text.match(/project_id = 7/g)!.length + (text.match(/'cohort_people'/g)?.length ?? 0),
    );
    expect(text).not.toMatch(/team_id = (?!7\b)|project_id = (?!7\b)/);
    expect(tableReads).toBeTypeOf('function');
  });

  it('prints strings escaped and placeholders as typed constants, never as SQL', async () => {
    expect(await sql("select 'it''s \\\\ \\' or 1=1 --'")).toBe(
      "SELECT 'it\\'s \\\\ \\' or 1=1 --' LIMIT 101",
    );
    expect(
      await sql('select {v}, {n}, {a}', {
        values: { v: "x'); drop table events; --", n: 2, a: ['a', 1] },
      }),
    ).toBe("SELECT 'x\\'); drop table events; --', 2, ['a', 1] LIMIT 101");
    await refused('select {v}', /Only strings, numbers, booleans, null and arrays/, {
      values: { v: { sql: 'x' } },
    });
    expect(await sql('select `we``ird`.`a b` from (select 1 as `a b`) as `we``ird`')).toBe(
      'SELECT `we\\`ird`.`a b` FROM (SELECT 1 AS `a b`) AS `we\\`ird` LIMIT 101',
    );
  });

  it('prints lambdas, intervals, IN, BETWEEN, CASE, arrays, tuples and windows', async () => {
    expect(await sql('select arrayMap(x -> x + 1, [1, 2]), (1, 2).1, [1][1]')).toBe(
      'SELECT arrayMap((x -> (x + 1)), [1, 2]), tupleElement(tuple(1, 2), 1), [1][1] LIMIT 101',
    );
    expect(
      await sql(
        'select now() - interval 1 day, 2 between 1 and 3, 1 in (1, 2), 1 not in (select 1)',
      ),
    ).toBe(
      'SELECT (now() - toIntervalDay(1)), (2 BETWEEN 1 AND 3), (1 IN (1, 2)), (1 NOT IN (SELECT 1)) LIMIT 101',
    );
    expect(
      await sql(
        "select case when 1 = 1 then 'a' else 'b' end, if(1, 2, 3), COUNT(), lag(1) over w from numbers(3) window w as (order by number)",
      ),
    ).toBe(
      "SELECT if((1 = 1), 'a', 'b'), if(1, 2, 3), count(), lagInFrame(1) OVER w FROM numbers(3) AS numbers WINDOW w AS (ORDER BY number ASC) LIMIT 101",
    );
    expect(
      await sql(
        'select sum(number) over (partition by number % 2 order by number rows between unbounded preceding and current row) from numbers(4)',
      ),
    ).toContain(
      'OVER (PARTITION BY (number % 2) ORDER BY number ASC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)',
    );
    expect(
      await sql('select number % 2 as k, count() from numbers(4) group by k with totals'),
    ).toContain('GROUP BY k WITH TOTALS');
  });

  it('prints properties as PostHog: JSON extraction on the properties text, named after the property', async () => {
    const text = await sql(
      "select properties.$browser, properties['a b'], person.properties.email from events",
    );
    expect(text).toContain(
      `replaceRegexpAll(nullIf(nullIf(JSONExtractRaw(events.properties, '$browser'), ''), 'null'), '^"|"$', '') AS \`$browser\``,
    );
    expect(text).toContain(`JSONExtractRaw(events.properties, 'a b')`);
    expect(text).toContain(`JSONExtractRaw(events.__person_properties, 'email')`);
    // a second field of the same name keeps its HogQL path, never the source's internal column
    const twice = await sql('select x.* from (select person_id, pdi.person_id from events) x');
    expect(twice).toContain(
      'events.__person_id AS person_id, events.__person_id AS `pdi.person_id`',
    );
  });

  it('refuses functions, table functions and tables outside the allow-list, naming them', async () => {
    await refused('select sleep(1)', /Unsupported function: sleep/);
    await refused("select getSetting('readonly')", /Unsupported function: getSetting/);
    await refused("select * from file('x')", /Unknown table function: file/);
    await refused("select * from remote('h', db.events)", /Unknown table function: remote/);
    await refused('select * from numbers(1 + 1)', /numbers\(\) takes numbers only/);
    await refused('select * from db.events', /Unknown table: db\.events/);
    await refused('select * from system.one', /Unknown table: system\.one/);
    await refused('select __person_id from events', /Field not found: __person_id/);
    await refused('select 1 from events as __e', /Reserved alias/);
    // f(DISTINCT x) is ClickHouse's -Distinct combinator: only aggregates have one
    await refused(
      'select toString(DISTINCT event) from events',
      /DISTINCT is only allowed in aggregate functions, not in toString\(\)/,
    );
    expect(await sql('select count(DISTINCT event) from events')).toContain(
      'count(DISTINCT events.event)',
    );
    // a bare name after IN is a table to ClickHouse: only a CTE may be named there
    expect(await sql('select 1 from events where distinct_id in person_distinct_id')).toContain(
      'IN tuple(person_distinct_id)',
    );
  });

  it('answers parse errors and deep nesting with a position, not a crash', async () => {
    const e = await refused('select 1 +', /SyntaxError/);
    expect(e.start).toBeGreaterThanOrEqual(0);
    await refused(
      `select ${'('.repeat(400)}1${')'.repeat(400)}`,
      /nests parentheses, brackets, CASE or NOT more than 20 deep/,
    );
    // runs of NOT and nested CASE cost the parser as much: refused before it sees them
    await refused(`select 1 from events where ${'NOT '.repeat(200)}1`, /CASE or NOT more than 20/);
    await refused(
      `select ${'case when 1 then '.repeat(30)}1${' else 0 end'.repeat(30)}`,
      /CASE or NOT more than 20/,
    );
    // …while names that spell the keywords, and CASEs one after another, are not nesting
    expect(
      await sql(
        `select properties.end, properties.not, ${Array(25).fill('case when 1 then 2 end').join(', ')} from events`,
      ),
    ).toContain("JSONExtractRaw(events.properties, 'end')");
    // PostHog's parser overflows its stack on a long chain of operators: a 400, and the next parse works
    await refused(`select 1${' + 1'.repeat(3000)}`, /too complex to parse/);
    expect(await sql('select (1)')).toBe('SELECT 1 LIMIT 101');
    await refused('select 1 limit -1', /LIMIT must be a whole number/);
  });
});
