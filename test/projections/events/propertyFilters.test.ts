import { describe, expect, it } from 'vitest';
import {
  compilePropertyFilters,
  FilterError,
  prepareHogQLFilters,
} from '../../../projections/events/propertyFilters.ts';
import { Params } from '../../../projections/events/sqlParams.ts';

const NOW = new Date('2024-03-31T12:00:00.000Z');
const compile = (input: unknown) => {
  const params = new Params();
  return { sql: compilePropertyFilters(input, params, NOW), params: params.values };
};
const PROP = (p: string) =>
  `multiIf(JSONExtractRaw(properties, ${p}) IN ('', 'null'), NULL, startsWith(JSONExtractRaw(properties, ${p}), '"'), JSONExtractString(JSONExtractRaw(properties, ${p})), JSONExtractRaw(properties, ${p}))`;

describe('property filters', () => {
  it('takes hogql conditions, parsed beforehand by the HogQL compiler', async () => {
    const ok = [{ type: 'hogql', key: "event = 'x'" }];
    await prepareHogQLFilters(ok);
    expect(compile(ok).sql).toBe("(event = 'x')");
    const bad = [{ type: 'hogql', key: 'nope(' }];
    await prepareHogQLFilters(bad);
    expect(() => compile(bad)).toThrow(/properties\[0\]: .*SyntaxError/);
  });

  it('compiles each operator with placeholders only', () => {
    const one = (operator: string, value?: unknown) => compile([{ key: 'k', operator, value }]);
    const k = PROP('{p0:String}');
    expect(one('exact', 'a')).toEqual({
      sql: `ifNull(${k} IN ({p1:String}), 0)`,
      params: { p0: 'k', p1: 'a' },
    });
    expect(one('exact', ['a', 2, true]).params).toEqual({ p0: 'k', p1: 'a', p2: '2', p3: 'true' });
    expect(one('is_not', 'a').sql).toBe(`ifNull(${k} NOT IN ({p1:String}), 1)`);
    expect(one('is_set').sql).toBe(`isNotNull(${k})`);
    expect(one('is_not_set').sql).toBe(`isNull(${k})`);
    expect(one('icontains', '5%_\\')).toEqual({
      sql: `ifNull(ilike(${k}, {p1:String}), 0)`,
      params: { p0: 'k', p1: '%5\\%\\_\\\\%' },
    });
    expect(one('not_icontains', 'x').sql).toBe(`ifNull(notILike(${k}, {p1:String}), 1)`);
    expect(one('regex', '^a').sql).toBe(`ifNull(match(${k}, {p1:String}), 0)`);
    expect(one('not_regex', '^a').sql).toBe(`ifNull(not(match(${k}, {p1:String})), 1)`);
    expect(one('gt', '10')).toEqual({
      sql: `ifNull(greater(toFloat64OrNull(${k}), {p1:Float64}), 0)`,
      params: { p0: 'k', p1: 10 },
    });
    expect(one('lte', 1.5).sql).toBe(
      `ifNull(lessOrEquals(toFloat64OrNull(${k}), {p1:Float64}), 0)`,
    );
    expect(one('is_date_before', '-7d')).toEqual({
      sql: `ifNull(less(parseDateTime64BestEffortOrNull(${k}, 6, 'UTC'), parseDateTime64BestEffort({p1:String}, 6, 'UTC')), 0)`,
      params: { p0: 'k', p1: '2024-03-24T12:00:00.000Z' },
    });
    expect(one('is_date_exact', '2024-01-01').sql).toMatch(
      /^ifNull\(toDateTime\(.*\) = toDateTime\(.*\), 0\)$/,
    );
  });

  it('ANDs lists, nests AND/OR groups and takes hogql conditions', () => {
    expect(
      compile([
        { key: 'a', value: 1 },
        { key: 'b', operator: 'is_set' },
      ]).sql,
    ).toBe(
      `and(ifNull(${PROP('{p0:String}')} IN ({p1:String}), 0), isNotNull(${PROP('{p2:String}')}))`,
    );
    expect(
      compile({
        type: 'OR',
        values: [
          { key: 'a', operator: 'is_set' },
          { type: 'AND', values: [{ key: 'b', operator: 'is_set' }] },
        ],
      }).sql,
    ).toBe(`or(isNotNull(${PROP('{p0:String}')}), isNotNull(${PROP('{p1:String}')}))`);
    expect(compile([]).sql).toBeNull();
    expect(compile(undefined).sql).toBeNull();
    expect(compile({ type: 'AND', values: [] }).sql).toBeNull();
  });

  it('keeps keys and values out of the SQL text', () => {
    const evil = "x') OR 1=1; DROP TABLE events --";
    const { sql, params } = compile([
      { key: evil, value: evil },
      { key: evil, operator: 'icontains', value: evil },
    ]);
    expect(sql).not.toContain('DROP');
    expect(sql).not.toContain('1=1');
    expect(Object.values(params)).toContain(evil);
  });

  it('refuses unsupported types and operators and bad values, with the path', () => {
    const fails = (input: unknown, message: RegExp) => {
      expect(() => compile(input)).toThrow(FilterError);
      expect(() => compile(input)).toThrow(message);
    };
    fails(
      [{ key: 'email', value: 'a', type: 'person' }],
      /properties\[0\]: person property filters are resolved in Postgres before the event query/,
    );
    fails([{ key: 'x', value: 1, type: 'cohort' }], /"cohort" are not supported/);
    fails(
      [{ key: 'x', operator: 'semver_gt', value: '1' }],
      /properties\[0\]\.operator: "semver_gt" is not supported/,
    );
    fails([{ key: 'x', operator: 'gt', value: 'x' }], /needs a number/);
    fails([{ key: 'x', operator: 'gt', value: '' }], /needs a number/);
    fails([{ key: 'x', operator: 'regex', value: '[' }], /invalid regular expression/);
    fails([{ key: 'x', operator: 'is_date_after', value: 'tomorrow' }], /ISO 8601/);
    fails([{ key: 'x' }], /a value is required for exact/);
    fails([{ key: 'x', value: { a: 1 } }], /must be a string, number or boolean/);
    fails([{ key: '' }], /key: a non-empty string is required/);
    fails(['x'], /expected a filter object/);
    fails({ type: 'OR', values: 'x' }, /values: expected a list/);
    let deep: unknown = { key: 'a', operator: 'is_set' };
    for (let i = 0; i < 12; i++) deep = { type: 'AND', values: [deep] };
    fails(deep, /nested deeper than 10/);
    fails(Array(101).fill({ key: 'a', operator: 'is_set' }), /more than 100 filters/);
  });
});
