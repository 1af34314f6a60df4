import type { SeededProject } from './twoProjects.ts';

/**
 * The queries the isolation suite sends with project A's key, one per way HogQL reaches a row:
 * each table, every lazy join and virtual field, joins of each pair (ON, USING, ON true, CROSS),
 * subqueries in FROM / IN / as a scalar, CTEs, UNION ALL, window functions, and the attempts to
 * name B: its team id, its ids, its cohort, table functions, raw ClickHouse and Postgres tables,
 * database-qualified names and SETTINGS.
 *
 * - `own`: 200, A's rows are there (its mark or its ids: the suite can fail) and none of B's;
 * - `count`: 200 and exactly `[[n]]` of A's own rows (B holds more of everything);
 * - `countOrRefused`: `count`, or a 400 (the compiler may refuse the name);
 * - `refusedOrNone`: a 400, or a 200 with none of B's rows.
 */
export type IsolationCase = {
  name: string;
  query: string;
  values?: Record<string, unknown>;
} & ({ expect: 'own' | 'refusedOrNone' } | { expect: 'count' | 'countOrRefused'; count: number });

export function isolationCases(
  a: SeededProject,
  b: SeededProject,
  chDatabase: string,
): IsolationCase[] {
  const n = a.counts;
  const own = (name: string, query: string): IsolationCase => ({ name, query, expect: 'own' });
  const count = (name: string, query: string, c: number): IsolationCase => ({
    name,
    query,
    expect: 'count',
    count: c,
  });
  const none = (name: string, query: string, values?: Record<string, unknown>): IsolationCase => ({
    name,
    query,
    expect: 'refusedOrNone',
    ...(values ? { values } : {}),
  });
  const countOrRefused = (name: string, query: string, c: number): IsolationCase => ({
    name,
    query,
    expect: 'countOrRefused',
    count: c,
  });
  const B = b.projectId;
  return [
    // every table, and its virtual fields and lazy joins
    own('events', 'SELECT uuid, event, properties FROM events'),
    own('events: properties.mark', 'SELECT properties.mark FROM events'),
    own('events: person.properties', 'SELECT person.properties.mark FROM events'),
    own('events: events.person', 'SELECT events.person.properties.mark FROM events'),
    own('events: person_id, person.id', 'SELECT person_id, person.id FROM events'),
    own('events: pdi.person_id', 'SELECT pdi.person_id, pdi.distinct_id FROM events'),
    own('events: pdi.person', 'SELECT pdi.person.properties.mark FROM events'),
    own('events: elements_chain', 'SELECT elements_chain, properties FROM events'),
    own('persons', 'SELECT id, properties FROM persons'),
    own('persons: pdi', 'SELECT pdi.distinct_id, properties.mark FROM persons'),
    own('person_distinct_ids', 'SELECT distinct_id, person_id FROM person_distinct_ids'),
    own('person_distinct_ids: person', 'SELECT person.properties.mark FROM person_distinct_ids'),
    own('groups', 'SELECT key, properties FROM groups'),
    own('cohort_people', 'SELECT person_id, cohort_id FROM cohort_people'),
    own('cohort_people: person', 'SELECT person.properties.mark FROM cohort_people'),
    own(
      'quoted table names',
      'SELECT properties FROM `events` UNION ALL SELECT properties FROM "persons"',
    ),
    count('count events', 'SELECT count() FROM events', n.events),
    count('count persons', 'SELECT count() FROM persons', n.persons),
    count('count person_distinct_ids', 'SELECT count() FROM person_distinct_ids', n.distinctIds),
    count('count groups', 'SELECT count() FROM groups', n.groups),
    count('count cohort_people', 'SELECT count() FROM cohort_people', n.cohortPeople),
    count('OR in WHERE', 'SELECT count() FROM events WHERE 1 = 1 OR 1 = 1', n.events),
    count('window over all rows', 'SELECT count() OVER () FROM events LIMIT 1', n.events),
    own(
      'window + lambda',
      'SELECT arrayMap(x -> x, [properties.mark]), count() OVER () FROM events',
    ),
    own(
      'GROUP BY WITH TOTALS',
      'SELECT properties.mark, count() FROM events GROUP BY properties.mark WITH TOTALS',
    ),
    // joins of each pair
    own(
      'events JOIN persons ON',
      'SELECT e.event, p.properties.mark FROM events e JOIN persons p ON e.person_id = p.id',
    ),
    own(
      'events LEFT JOIN person_distinct_ids',
      'SELECT e.properties.mark, d.person_id FROM events e LEFT JOIN person_distinct_ids d ON d.distinct_id = e.distinct_id',
    ),
    own(
      'events JOIN person_distinct_ids USING',
      'SELECT distinct_id, person_distinct_ids.person_id FROM events JOIN person_distinct_ids USING (distinct_id)',
    ),
    own(
      'person_distinct_ids JOIN persons',
      'SELECT d.distinct_id, p.properties.mark FROM person_distinct_ids d INNER JOIN persons p ON p.id = d.person_id',
    ),
    own(
      'cohort_people JOIN persons',
      'SELECT c.cohort_id, p.properties.mark FROM cohort_people c JOIN persons p ON p.id = c.person_id',
    ),
    own(
      'events JOIN cohort_people',
      'SELECT e.properties.mark FROM events e JOIN cohort_people c ON c.person_id = e.person_id',
    ),
    own(
      'persons self-join',
      'SELECT x.properties.mark FROM persons x JOIN persons y ON x.id = y.id',
    ),
    none(
      'events JOIN groups on $group_0',
      'SELECT g.properties.mark FROM events e JOIN groups g ON g.key = e.$group_0',
    ),
    none('JOIN ON true', 'SELECT p.properties, g.properties FROM persons p JOIN groups g ON true'),
    none(
      'JOIN ON 1 = 1',
      'SELECT p.properties, g.properties FROM persons p JOIN groups g ON 1 = 1',
    ),
    count(
      'CROSS JOIN events × groups',
      'SELECT count() FROM events CROSS JOIN groups',
      n.events * n.groups,
    ),
    countOrRefused(
      'comma join persons, cohort_people',
      'SELECT count() FROM persons, cohort_people',
      n.persons * n.cohortPeople,
    ),
    own(
      'subqueries joined',
      'SELECT e.m, p.properties FROM (SELECT person_id, properties.mark AS m FROM events) e JOIN (SELECT id, properties FROM persons) p ON e.person_id = p.id',
    ),
    // subqueries, CTEs, UNION ALL
    own('subquery in FROM', 'SELECT m FROM (SELECT properties.mark AS m FROM events)'),
    own(
      'subquery in IN',
      'SELECT properties.mark FROM events WHERE distinct_id IN (SELECT distinct_id FROM person_distinct_ids)',
    ),
    own(
      'persons IN events',
      'SELECT properties.mark FROM persons WHERE id IN (SELECT person_id FROM events)',
    ),
    count('scalar subquery', 'SELECT (SELECT count() FROM persons)', n.persons),
    count(
      'three levels of subqueries',
      'SELECT count() FROM (SELECT * FROM (SELECT distinct_id FROM (SELECT distinct_id FROM events)))',
      n.events,
    ),
    own('CTE', 'WITH ids AS (SELECT id, properties FROM persons) SELECT properties FROM ids'),
    count(
      'CTE of events',
      'WITH x AS (SELECT distinct_id FROM events) SELECT count() FROM x',
      n.events,
    ),
    own(
      'UNION ALL of three tables',
      'SELECT properties.mark FROM events UNION ALL SELECT properties.mark FROM persons UNION ALL SELECT properties.mark FROM groups',
    ),
    count(
      'count over UNION ALL',
      'SELECT count() FROM (SELECT 1 FROM events UNION ALL SELECT 1 FROM persons)',
      n.events + n.persons,
    ),
    // naming project B
    none('team_id = B on events', `SELECT properties FROM events WHERE team_id = ${B}`),
    none('team_id = B on persons', `SELECT properties FROM persons WHERE team_id = ${B}`),
    none('team_id = B on groups', `SELECT properties FROM groups WHERE team_id = ${B}`),
    none(
      'team_id = B on person_distinct_ids',
      `SELECT person_id FROM person_distinct_ids WHERE team_id = ${B}`,
    ),
    none(
      'team_id = B on cohort_people',
      `SELECT person_id FROM cohort_people WHERE team_id = ${B}`,
    ),
    countOrRefused(
      'OR team_id = B',
      `SELECT count() FROM events WHERE true OR team_id = ${B}`,
      n.events,
    ),
    none(
      'team_id IN (A, B)',
      `SELECT properties FROM events WHERE team_id IN (${a.projectId}, ${B})`,
    ),
    none('team_id from a placeholder', 'SELECT properties FROM events WHERE team_id = {other}', {
      other: B,
    }),
    none('B cohort id', `SELECT person_id FROM cohort_people WHERE cohort_id = ${b.cohortId}`),
    none('IN COHORT B', `SELECT properties FROM events WHERE person_id IN COHORT ${b.cohortId}`),
    none('B person uuid', `SELECT properties FROM persons WHERE id = '${b.personUuids[0]}'`),
    none(
      'B person uuid on events',
      `SELECT properties FROM events WHERE person_id IN ('${b.personUuids.join("', '")}')`,
    ),
    none('B event uuid', `SELECT properties FROM events WHERE uuid = '${b.eventUuids[0]}'`),
    // SETTINGS
    countOrRefused('SETTINGS', 'SELECT count() FROM events SETTINGS max_threads = 1', n.events),
    none('SETTINGS readonly = 0', 'SELECT properties FROM events SETTINGS readonly = 0'),
    none(
      'SETTINGS additional_table_filters',
      "SELECT properties FROM events SETTINGS additional_table_filters = {'events': '1'}",
    ),
    // table functions and tables HogQL does not know
    none(
      'postgresql()',
      "SELECT * FROM postgresql('127.0.0.1:5432', 'postgres', 'persons', 'postgres', 'postgres')",
    ),
    none('remote()', "SELECT * FROM remote('127.0.0.1', 'default', 'events')"),
    none('cluster()', "SELECT * FROM cluster('default', 'default', 'events')"),
    none('merge()', "SELECT * FROM merge('.*', 'events')"),
    none('url()', "SELECT * FROM url('http://127.0.0.1/', 'CSV', 'a String')"),
    none('file()', "SELECT * FROM file('/etc/passwd', 'CSV', 'a String')"),
    none('s3()', "SELECT * FROM s3('http://127.0.0.1/x.csv', 'CSV', 'a String')"),
    none('executable()', "SELECT * FROM executable('id', 'CSV', 'a String')"),
    none('mysql()', "SELECT * FROM mysql('127.0.0.1:3306', 'db', 't', 'u', 'p')"),
    none('system.tables', 'SELECT * FROM system.tables'),
    none('database-qualified events', `SELECT properties FROM ${chDatabase}.events`),
    none('default.events', 'SELECT properties FROM default.events'),
    none('ClickHouse person_distinct_id', 'SELECT * FROM person_distinct_id'),
    none('raw_persons', 'SELECT properties FROM raw_persons'),
    none('raw_person_distinct_ids', 'SELECT * FROM raw_person_distinct_ids'),
    none('raw_groups', 'SELECT properties FROM raw_groups'),
    none('raw_cohort_people', 'SELECT * FROM raw_cohort_people'),
    none('Postgres cohorts', 'SELECT * FROM cohorts'),
    none('Postgres event_log', 'SELECT * FROM event_log'),
    none('Postgres personal_api_keys', 'SELECT * FROM personal_api_keys'),
    none('Postgres projects', 'SELECT * FROM projects'),
    none('an alias named as a table', 'SELECT persons.properties FROM events AS persons'),
  ];
}
