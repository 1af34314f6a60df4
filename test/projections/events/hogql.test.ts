import { describe, expect, it } from 'vitest';
import { ExprCompiler } from '../../../projections/events/hogql/hogqlCompiler.ts';
import {
  parseExpr,
  parseOrderItem,
  parseSelectItem,
} from '../../../projections/events/hogql/hogqlParser.ts';
import {
  compileOrderBy,
  compileSelect,
  compileWhere,
} from '../../../projections/events/hogql/hogqlQuery.ts';
import { HogQLError, tokenize } from '../../../projections/events/hogql/hogqlTokenizer.ts';
import { Params } from '../../../projections/events/sqlParams.ts';

const compile = (text: string) => {
  const params = new Params();
  const c = new ExprCompiler(params).compile(parseExpr(text));
  return { ...c, params: params.values };
};
const fails = (fn: () => unknown, message: RegExp) => {
  expect(fn).toThrow(HogQLError);
  expect(fn).toThrow(message);
};

describe('HogQL tokenizer', () => {
  it('reads identifiers, quoted identifiers, strings, numbers and operators', () => {
    expect(
      tokenize("properties.`$x` >= 1.5e3 AND e != 'it''s \\n'").map((t) =>
        t.kind === 'eof' ? 'eof' : `${t.kind}:${t.value}`,
      ),
    ).toEqual([
      'ident:properties',
      'op:.',
      'ident:$x',
      'op:>=',
      'number:1500',
      'ident:AND',
      'ident:e',
      'op:!=',
      "string:it's \n",
      'eof',
    ]);
    expect(tokenize('"a b"')[0]).toEqual({ kind: 'ident', value: 'a b', quoted: true, pos: 0 });
    expect(tokenize('<> == <=').map((t) => (t.kind === 'op' ? t.value : t.kind))).toEqual([
      '<>',
      '==',
      '<=',
      'eof',
    ]);
  });

  it('refuses what the subset leaves out', () => {
    fails(() => tokenize('a -- comment'), /Comments are not supported/);
    fails(() => tokenize('x -> x'), /Unsupported operator "->"/);
    fails(() => tokenize('a::String'), /Unsupported operator "::"/);
    fails(() => tokenize("'a' || 'b'"), /Unsupported operator "\|\|"/);
    fails(() => tokenize('{param}'), /Unsupported operator "\{"/);
    fails(() => tokenize("'open"), /Unterminated string/);
    fails(() => tokenize('`open'), /Unterminated quoted identifier/);
    fails(() => tokenize('12abc'), /Invalid number/);
    fails(() => tokenize('a ☃ b'), /Unexpected character "☃"/);
  });
});

describe('HogQL parser', () => {
  it('builds the expression tree with SQL precedence', () => {
    expect(parseExpr("a = 1 OR NOT b = 'x' AND c IS NOT NULL")).toEqual({
      kind: 'or',
      args: [
        {
          kind: 'compare',
          op: '=',
          left: { kind: 'field', chain: ['a'] },
          right: { kind: 'constant', value: 1 },
        },
        {
          kind: 'and',
          args: [
            {
              kind: 'not',
              expr: {
                kind: 'compare',
                op: '=',
                left: { kind: 'field', chain: ['b'] },
                right: { kind: 'constant', value: 'x' },
              },
            },
            { kind: 'isNull', negated: true, expr: { kind: 'field', chain: ['c'] } },
          ],
        },
      ],
    });
    expect(parseExpr('1 + 2 * -3')).toEqual({
      kind: 'arith',
      op: '+',
      left: { kind: 'constant', value: 1 },
      right: {
        kind: 'arith',
        op: '*',
        left: { kind: 'constant', value: 2 },
        right: { kind: 'constant', value: -3 },
      },
    });
  });

  it('reads fields, calls, IN, LIKE and literals', () => {
    expect(parseExpr("properties['a b'].c.`$d`")).toEqual({
      kind: 'field',
      chain: ['properties', 'a b', 'c', '$d'],
    });
    expect(parseExpr('count(DISTINCT distinct_id)')).toEqual({
      kind: 'call',
      name: 'count',
      args: [{ kind: 'field', chain: ['distinct_id'] }],
      distinct: true,
      star: false,
    });
    expect(parseExpr('count(*)')).toEqual({
      kind: 'call',
      name: 'count',
      args: [],
      distinct: false,
      star: true,
    });
    expect(parseExpr("e not in ('a', 'b')")).toMatchObject({
      kind: 'in',
      negated: true,
      list: [{ value: 'a' }, { value: 'b' }],
    });
    expect(parseExpr("e NOT ILIKE '%a%'")).toMatchObject({ kind: 'compare', op: 'not ilike' });
    expect(parseExpr('NULL')).toEqual({ kind: 'constant', value: null });
    expect(parseExpr('TRUE')).toEqual({ kind: 'constant', value: true });
    expect(parseSelectItem('count() AS n')).toEqual({
      expr: { kind: 'call', name: 'count', args: [], distinct: false, star: false },
      alias: 'n',
    });
    expect(parseOrderItem('-timestamp')).toEqual({
      expr: { kind: 'field', chain: ['timestamp'] },
      desc: true,
    });
    expect(parseOrderItem('event desc')).toEqual({
      expr: { kind: 'field', chain: ['event'] },
      desc: true,
    });
    expect(parseOrderItem('event ASC')).toEqual({
      expr: { kind: 'field', chain: ['event'] },
      desc: false,
    });
  });

  it('names unsupported constructs and syntax errors', () => {
    fails(() => parseExpr('event IN (SELECT 1)'), /subqueries/);
    fails(() => parseExpr('a BETWEEN 1 AND 2'), /BETWEEN/);
    fails(() => parseExpr('CASE WHEN a THEN 1 END'), /CASE expressions/);
    fails(() => parseExpr('a = INTERVAL 1 DAY'), /INTERVAL/);
    fails(() => parseExpr('(1, 2)'), /tuples/);
    fails(() => parseExpr('quantile(0.5)(x)'), /parametric functions/);
    fails(() => parseExpr('a ='), /Unexpected end of input/);
    fails(() => parseExpr('a = 1 b'), /Unexpected "b" at position 6/);
    fails(() => parseExpr('properties[1]'), /quoted key/);
    fails(() => parseExpr('a IS 1'), /Unexpected number 1/);
    fails(() => parseExpr(`${'('.repeat(101)}1${')'.repeat(101)}`), /nested more than 100/);
  });
});

describe('HogQL compiler', () => {
  it('turns every literal into a typed placeholder', () => {
    const c = compile(
      "event = 'x'' OR 1=1' AND properties.amount > 10 AND properties.f = true AND properties.r < 2.5",
    );
    expect(c.sql).not.toMatch(/OR 1=1|10|2\.5|'x/);
    expect(Object.values(c.params)).toEqual(
      expect.arrayContaining(["x' OR 1=1", 'amount', 10, true, 2.5]),
    );
    expect(c.sql).toContain('{p0:String}');
    expect(c.sql).toMatch(/\{p\d+:Int64\}/);
    expect(c.sql).toMatch(/\{p\d+:Float64\}/);
    expect(c.sql).toMatch(/\{p\d+:Bool\}/);
    expect(c.type).toBe('bool');
  });

  it('reuses one placeholder for one value, so equal expressions compile equally', () => {
    const params = new Params();
    const compiler = new ExprCompiler(params);
    expect(compiler.compile(parseExpr('properties.a')).sql).toBe(
      compiler.compile(parseExpr("properties['a']")).sql,
    );
    expect(Object.keys(params.values)).toEqual(['p0']);
  });

  it('reads properties as text, as numbers next to numbers and as dates next to dates', () => {
    expect(compile('properties.a').sql).toBe(
      "multiIf(JSONExtractRaw(properties, {p0:String}) IN ('', 'null'), NULL, startsWith(JSONExtractRaw(properties, {p0:String}), '\"'), JSONExtractString(JSONExtractRaw(properties, {p0:String})), JSONExtractRaw(properties, {p0:String}))",
    );
    expect(compile('properties.a > 1').sql).toMatch(
      /^ifNull\(greater\(toFloat64OrNull\(multiIf\(.*\)\), \{p1:Int64\}\), 0\)$/,
    );
    expect(compile("timestamp < '2024-01-01'").sql).toBe(
      "ifNull(less(timestamp, parseDateTime64BestEffortOrNull({p0:String}, 6, 'UTC')), 0)",
    );
    expect(compile("toDate(timestamp) = '2024-01-01'").sql).toBe(
      "ifNull(equals(toDate(timestamp), toDate(parseDateTime64BestEffortOrNull({p0:String}, 6, 'UTC'))), 0)",
    );
    expect(compile('properties.f = true').sql).toMatch(
      /^ifNull\(equals\(multiIf\(.*\), if\(\{p1:Bool\}, 'true', 'false'\)\), 0\)$/,
    );
    expect(compile("event != 'a'").sql).toBe('ifNull(notEquals(event, {p0:String}), 1)');
    expect(compile('event = NULL').sql).toBe('isNull(event)');
    expect(compile('uuid').sql).toBe('toString(uuid)');
  });

  it('compiles functions and aggregates, tracking types', () => {
    expect(compile('lower(event)')).toMatchObject({
      sql: 'lower(event)',
      type: 'string',
      aggregate: false,
      column: true,
    });
    expect(compile('count()')).toMatchObject({
      sql: 'count()',
      type: 'number',
      aggregate: true,
      column: false,
    });
    expect(compile('count(DISTINCT distinct_id)').sql).toBe('count(DISTINCT distinct_id)');
    expect(compile('sum(properties.x)').sql).toMatch(/^sum\(toFloat64OrNull\(multiIf/);
    expect(compile('round(avg(toFloat(properties.x)), 2)')).toMatchObject({
      type: 'number',
      aggregate: true,
      column: false,
    });
    expect(compile('now()')).toMatchObject({
      sql: "now64(6, 'UTC')",
      type: 'datetime',
      column: false,
    });
    expect(compile('coalesce(properties.a, 0)').sql).toMatch(
      /^coalesce\(toFloat64OrNull\(multiIf.*\), \{p1:Int64\}\)$/,
    );
    expect(compile("concat(event, '-')").sql).toBe(
      "concat(ifNull(event, ''), ifNull({p0:String}, ''), '')",
    );
    expect(compile('substring(event, 2, 3)').sql).toBe(
      'substring(event, toInt64({p0:Int64}), toInt64({p1:Int64}))',
    );
  });

  it('refuses unknown names, misused aggregates and impossible comparisons', () => {
    fails(() => compile('secret = 1'), /Unknown field "secret"/);
    fails(() => compile('events.event = 1'), /Unknown field "events.event"/);
    fails(
      () => compile('person.properties.email'),
      /Unsupported use of "person.properties.email": person properties are supported in where only/,
    );
    fails(
      () => compile('person.id'),
      /Unsupported field "person.id": of the person, only person.properties.<key>/,
    );
    fails(() => compile('sleep(1)'), /Unsupported function "sleep"/);
    fails(() => compile("file('x')"), /Unsupported function "file"/);
    fails(() => compile('count(count())'), /cannot be nested/);
    fails(() => compile('lower(*)'), /only supported in count/);
    fails(() => compile('count(DISTINCT a, b)'), /exactly one argument/);
    fails(() => compile('now(1)'), /takes 0 argument/);
    fails(() => compile('timestamp + 1'), /Cannot use a datetime as a number/);
    fails(() => compile('timestamp = true'), /Cannot compare a boolean with a date/);
    fails(() => compile('event < NULL'), /NULL can only be compared/);
    fails(() => compile('event IN (NULL)'), /IS NULL/);
    fails(() => compile('substring(event, properties.x)'), /must be a number constant/);
  });
});

describe('select, where and orderBy lists', () => {
  it('groups by the non-aggregate select items when there are aggregates', () => {
    const s = compileSelect(['event', 'count() AS n', "'const'"], new Params());
    expect(s.columns).toEqual(['event', 'n', "'const'"]);
    expect(s.aggregate).toBe(true);
    expect(s.groupBy).toEqual(['event']);
    expect(compileSelect(['event', 'timestamp'], new Params())).toMatchObject({
      aggregate: false,
      groupBy: [],
    });
  });

  it('names the parameter in errors and checks every item', () => {
    const error = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return e as HogQLError;
      }
      throw new Error('did not throw');
    };
    expect(error(() => compileWhere(["event = 'a'", 'count() > 1'], new Params()))).toMatchObject({
      attr: 'where',
      message: 'where "count() > 1": aggregates are not allowed in where',
    });
    expect(error(() => compileSelect(['*'], new Params())).attr).toBe('select');
    expect(error(() => compileSelect(['count() + length(event)'], new Params())).message).toMatch(
      /mixes aggregate/,
    );
    expect(error(() => compileWhere(['event'], new Params())).message).toMatch(
      /Expected a condition/,
    );
    expect(error(() => compileWhere(['x'.repeat(5000)], new Params())).message).toMatch(
      /longer than 4000/,
    );
    expect(error(() => compileWhere(Array(51).fill('true'), new Params())).message).toMatch(
      /At most 50/,
    );
    expect(error(() => compileWhere([' '], new Params())).message).toMatch(/Empty where/);
  });

  it('orders by expressions, select aliases and grouped items', () => {
    const params = new Params();
    const s = compileSelect(['properties.a', 'count() AS n'], params);
    expect(compileOrderBy(['n', '-properties.a'], params, s)).toEqual([
      { sql: 'count()', desc: false, timestamp: false },
      { sql: s.groupBy[0], desc: true, timestamp: false },
    ]);
    expect(compileOrderBy(['-timestamp'], new Params())).toEqual([
      { sql: 'timestamp', desc: true, timestamp: true },
    ]);
    expect(() => compileOrderBy(['event'], params, s)).toThrow(
      /must be an aggregate or one of the non-aggregate/,
    );
    expect(() => compileOrderBy(['count()'], new Params())).toThrow(/need an aggregate select/);
  });
});
