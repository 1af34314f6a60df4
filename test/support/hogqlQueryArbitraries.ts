import fc from 'fast-check';

/**
 * Generated HogQL SELECTs for the /query fuzz suite (test/http/query.fuzz.integration.test.ts):
 * text, not trees, since the endpoint must meet what a user could type. Expressions over every
 * table's fields and virtual fields with allowed and refused functions called with any number of
 * arguments of any type, lambdas, windows, CASE, placeholders; SELECTs with joins, subqueries,
 * CTEs and UNION ALL; nesting around and far past the limits; literals past what 64-bit numbers
 * hold and strings near the query's length limit; text cut anywhere (unterminated strings,
 * identifiers, comments, brackets).
 */

/** Functions HogQL must refuse: files, the network, the server, sleeping, dictionaries, settings. */
export const REFUSED_FUNCTIONS = [
  'file',
  'url',
  'remote',
  'remoteSecure',
  's3',
  'hdfs',
  'postgresql',
  'mysql',
  'executable',
  'sleep',
  'sleepEachRow',
  'dictGet',
  'joinGet',
  'getSetting',
  'currentUser',
  'currentDatabase',
  'hostName',
  'version',
  'throwIf',
  'getMacro',
  'filesystemAvailable',
  'tcpPort',
  'uptime',
  'getServerPort',
  'initializeAggregation',
  'runningAccumulate',
  'addressToLine',
  'randomString',
  'shardNum',
  'input',
] as const;

export const TABLES = ['events', 'persons', 'person_distinct_ids', 'groups', 'cohort_people'];
const FIELDS = [
  'event',
  'timestamp',
  'distinct_id',
  'uuid',
  'person_id',
  'properties',
  'elements_chain',
  'created_at',
  'properties.$browser',
  'properties.n',
  'properties.a.b',
  "properties['x y']",
  'properties.$browser.length',
  'person.properties.email',
  'person.id',
  'pdi.person_id',
  'person.created_at',
  'id',
  'key',
  'index',
  'cohort_id',
  'is_identified',
  'events.event',
  'e.event',
  'nope',
  '`weird name`',
  '*',
];

/** Literals at and past the edges of Int64, UInt64 and Float64, long digit strings. */
const edgeNumber = fc.oneof(
  fc.constantFrom(
    '9223372036854775807',
    '-9223372036854775808',
    '9223372036854775808',
    '18446744073709551616',
    '-18446744073709551616',
    '9007199254740993',
    '1e400',
    '-1e309',
    '1.7976931348623157e308',
    '4.9e-324',
    '0x7fffffffffffffff',
    '0b101',
    '1e-400',
    '-0',
  ),
  fc
    .tuple(fc.integer({ min: 16, max: 450 }), fc.constantFrom('', '-', '0.', '-0.'))
    .map(([n, sign]) => `${sign}${'9'.repeat(n)}`),
);

/** Strings as HogQL writes them: escapes, quotes, NUL, lone surrogates, emoji, LIKE wildcards. */
const stringLiteral = fc.oneof(
  fc.string({ maxLength: 12 }).map((s) => `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`),
  fc.constantFrom("''", "'\\''", "'\\\\'", "'%_'", "'\\0'", "'\\x41'", "'\ud800'", "'😀'", "'\\n'"),
);

const atom = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...FIELDS.filter((f) => f !== '*')) },
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.constantFrom('true', 'false', 'null', 'NULL', 'nan', 'inf', '-inf'),
  stringLiteral,
  edgeNumber,
  fc.constantFrom('{p}', '{s}', '{arr}', '{nope}', '{filters}'),
  fc.constantFrom('interval 1 day', 'INTERVAL 3 month', 'interval -1 second', "interval '2' hour"),
  fc.constantFrom('now()', 'today()', "toDateTime('2024-01-01 00:00:00')"),
);

const BINARY = [
  '+',
  '-',
  '*',
  '/',
  '%',
  '=',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  'LIKE',
  'NOT ILIKE',
  'AND',
  'OR',
  '=~',
  '!~*',
  '??',
  '||',
  'IN',
  'NOT IN',
  'GLOBAL IN',
];

/** An expression tree over `names` (the functions called), depth bounded by fast-check. */
export function hogqlExpr(names: readonly string[]): fc.Arbitrary<string> {
  const { expr } = fc.letrec<{ expr: string }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', maxDepth: 4 },
      { weight: 3, arbitrary: atom },
      fc
        .tuple(fc.constantFrom(...names), fc.array(tie('expr'), { maxLength: 4 }), fc.boolean())
        .map(([f, args, distinct]) => `${f}(${distinct ? 'DISTINCT ' : ''}${args.join(', ')})`),
      fc
        .tuple(tie('expr'), fc.constantFrom(...BINARY), tie('expr'))
        .map(([l, op, r]) => `${l} ${op} ${r}`),
      fc.tuple(fc.constantFrom('NOT ', '-', '+'), tie('expr')).map(([op, e]) => `${op}${e}`),
      tie('expr').map((e) => `(${e})`),
      fc.array(tie('expr'), { maxLength: 4 }).map((xs) => `[${xs.join(', ')}]`),
      fc.array(tie('expr'), { minLength: 2, maxLength: 3 }).map((xs) => `(${xs.join(', ')})`),
      fc.tuple(tie('expr'), tie('expr')).map(([a, i]) => `${a}[${i}]`),
      tie('expr').map((e) => `${e}.1`),
      fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([c, a, b]) => `${c} ? ${a} : ${b}`),
      fc
        .tuple(tie('expr'), tie('expr'), tie('expr'))
        .map(([c, a, b]) => `CASE WHEN ${c} THEN ${a} ELSE ${b} END`),
      fc
        .tuple(fc.constantFrom('arrayMap', 'arrayFilter', 'arrayExists'), tie('expr'), tie('expr'))
        .map(([f, body, arr]) => `${f}(x -> ${body.replace(/\bevent\b/, 'x')}, ${arr})`),
      fc
        .tuple(tie('expr'), tie('expr'), tie('expr'))
        .map(([a, l, h]) => `${a} BETWEEN ${l} AND ${h}`),
      tie('expr').map((e) => `${e} IS NOT NULL`),
      tie('expr').map((e) => `${e} AS alias_${e.length % 3}`),
      fc
        .tuple(fc.constantFrom('count()', 'row_number()', 'sum(1)', 'lag(event)'), tie('expr'))
        .map(([w, by]) => `${w} OVER (PARTITION BY ${by} ORDER BY timestamp)`),
      tie('expr').map((e) => `${e} IN (SELECT event FROM events)`),
      tie('expr').map((e) => `(SELECT ${e})`),
    ),
  }));
  return expr;
}

const source = (inner: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...TABLES) },
    fc.constantFrom(...TABLES).map((t) => `${t} AS e`),
    fc.integer({ min: -2, max: 20 }).map((n) => `numbers(${n})`),
    fc.constantFrom(
      'system.tables',
      'unknown_table',
      'default.events',
      "file('x')",
      'events FINAL',
    ),
    inner.map((s) => `(${s})`),
    fc
      .tuple(
        fc.constantFrom(...TABLES),
        fc.constantFrom(
          'JOIN',
          'LEFT JOIN',
          'INNER JOIN',
          'CROSS JOIN',
          'FULL OUTER JOIN',
          'ARRAY JOIN',
        ),
        fc.constantFrom(...TABLES),
        fc.constantFrom(
          ' ON true',
          ' ON a.distinct_id = b.distinct_id',
          ' USING (distinct_id)',
          '',
        ),
      )
      .map(([l, j, r, on]) => `${l} a ${j} ${r} b${j === 'CROSS JOIN' ? '' : on}`),
  );

/** One SELECT, possibly with subqueries, CTEs and UNION ALL. */
export function hogqlSelect(names: readonly string[]): fc.Arbitrary<string> {
  const e = hogqlExpr(names);
  const opt = (kw: string, a: fc.Arbitrary<string>) =>
    fc.option(
      a.map((x) => ` ${kw} ${x}`),
      { nil: '' },
    );
  const { select } = fc.letrec<{ select: string }>((tie) => ({
    select: fc.oneof(
      { depthSize: 'small', maxDepth: 2 },
      {
        weight: 4,
        arbitrary: fc
          .tuple(
            fc.boolean(),
            fc.array(fc.oneof(e, fc.constant('*')), { minLength: 1, maxLength: 4 }),
            fc.option(source(tie('select')), { nil: undefined }),
            opt('WHERE', e),
            opt('GROUP BY', e),
            opt('HAVING', e),
            opt(
              'ORDER BY',
              e.map((x) => `${x} DESC`),
            ),
            opt('LIMIT', fc.oneof(fc.integer({ min: -1, max: 60_000 }).map(String), edgeNumber)),
            opt('OFFSET', fc.integer({ min: 0, max: 10 }).map(String)),
          )
          .map(
            ([distinct, cols, from, where, group, having, order, limit, offset]) =>
              `SELECT ${distinct ? 'DISTINCT ' : ''}${cols.join(', ')}${from ? ` FROM ${from}` : ''}${where}${group}${having}${order}${limit}${offset}`,
          ),
      },
      fc.tuple(tie('select'), tie('select')).map(([a, b]) => `${a} UNION ALL ${b}`),
      fc
        .tuple(tie('select'), tie('select'))
        .map(([a, b]) => `WITH c AS (${a}) ${b.replace(/FROM \w+/, 'FROM c')}`),
    ),
  }));
  return select;
}

/** n levels of one way to nest: around ClickHouse's and the printer's limits, or far past them. */
export const deepQuery = fc
  .tuple(
    fc.oneof(fc.integer({ min: 190, max: 210 }), fc.integer({ min: 0, max: 1_500 })),
    fc.constantFrom(
      'not',
      'parens',
      'minus',
      'plus',
      'call',
      'array',
      'subquery',
      'union',
      'lambda',
      'case',
    ),
  )
  .map(([n, form]) => {
    const where = (e: string) => `SELECT count() FROM events WHERE ${e}`;
    switch (form) {
      case 'not':
        return where(`${'NOT '.repeat(n)}event = 'a'`);
      case 'parens':
        return `SELECT ${'('.repeat(n)}1${')'.repeat(n)}`;
      case 'minus':
        return `SELECT ${'- '.repeat(n)}1`;
      case 'plus':
        return `SELECT 1${' + 1'.repeat(n)}`;
      case 'call':
        return `SELECT ${'lower('.repeat(n)}event${')'.repeat(n)} FROM events`;
      case 'array':
        return `SELECT ${'['.repeat(n)}1${']'.repeat(n)}`;
      case 'subquery':
        return `${'SELECT * FROM ('.repeat(n)}SELECT event FROM events${')'.repeat(n)}`;
      case 'union':
        return Array.from({ length: Math.min(n, 1_000) + 1 }, () => 'SELECT 1').join(' UNION ALL ');
      case 'lambda':
        return `SELECT ${'arrayMap(x -> '.repeat(n)}x${', [1])'.repeat(n)}`;
      default:
        return `SELECT ${'CASE WHEN true THEN '.repeat(n)}1${' ELSE 0 END'.repeat(n)}`;
    }
  });

/** Literals too big for their type, and text near and past the query's length limit. */
export const hugeQuery = fc.oneof(
  fc.integer({ min: 1_000, max: 120_000 }).map((n) => `SELECT '${'x'.repeat(n)}'`),
  fc.integer({ min: 100, max: 5_000 }).map((n) => `SELECT [${Array(n).fill('1').join(',')}]`),
  fc
    .integer({ min: 100, max: 5_000 })
    .map(
      (n) =>
        `SELECT count() FROM events WHERE event IN (${Array.from({ length: n }, (_, i) => `'e${i}'`).join(',')})`,
    ),
  edgeNumber.map((x) => `SELECT ${x}, ${x} + 1, toInt64(${x}), range(${x}) FROM events`),
  fc.constantFrom(
    "SELECT repeat('x', 1000000000)",
    'SELECT range(1000000000)',
    'SELECT arrayMap(x -> range(100000), range(100000))',
    'SELECT count() FROM numbers(100000000000) WHERE 1 = 0',
    'SELECT groupArray(number) FROM numbers(200000)',
    'SELECT number FROM numbers(60000) LIMIT 60000',
  ),
);

/** A valid-looking query cut anywhere, or with one of its quotes, brackets or comments left open. */
export const brokenQuery = (valid: fc.Arbitrary<string>) =>
  fc.oneof(
    fc
      .tuple(valid, fc.double({ min: 0, max: 1, noNaN: true }))
      .map(([q, at]) => q.slice(0, Math.floor(q.length * at))),
    fc.constantFrom(
      "SELECT 'unterminated",
      "SELECT event FROM events WHERE event = 'a",
      'SELECT `unterminated FROM events',
      'SELECT "unterminated FROM events',
      'SELECT (1 + 2',
      'SELECT [1, 2',
      'SELECT 1 /* open comment',
      'SELECT 1 -- trailing comment',
      "SELECT 'a\\'",
      'SELECT {p',
      'SELECT f(',
      '',
      '   ',
      ';',
      'SELECT 1; SELECT 2',
      'DROP TABLE events',
      'INSERT INTO events VALUES (1)',
      'ALTER TABLE events DELETE WHERE 1',
      "SELECT 1 INTO OUTFILE '/tmp/x'",
      'SELECT 1 FORMAT Native',
      '\u0000',
      '\ud800',
    ),
    fc.string({ maxLength: 60 }),
    fc.string({ maxLength: 40, unit: 'binary' }).map((s) => `SELECT ${s}`),
  );

/** Values for the placeholders, of any JSON type (the compiler must refuse what it cannot bind). */
export const placeholderValues = fc.option(
  fc.record(
    {
      p: fc.oneof(fc.integer(), fc.double(), fc.constant(2 ** 64), fc.string(), fc.boolean()),
      s: fc.jsonValue({ maxDepth: 3 }),
      arr: fc.array(fc.oneof(fc.integer(), fc.string()), { maxLength: 5 }),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);
