import createHogQLParser from '@posthog/hogql-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  hogqlFiltersExpr,
  hogqlString,
  propertyFiltersHogQL,
} from '../../../projections/hogql/propertyFiltersHogQL.ts';

let parser: Awaited<ReturnType<typeof createHogQLParser>>;
beforeAll(async () => {
  parser = await createHogQLParser();
});

/** Every produced condition must be HogQL PostHog's own parser reads. */
const parses = (expr: string) => {
  const ast = JSON.parse(parser.parseExpr(expr));
  expect(ast.error, `${expr}: ${ast.message}`).toBeUndefined();
  return ast;
};

describe('property filters as HogQL', () => {
  it('event, person, cohort, group, element and hogql filters each become one HogQL condition', () => {
    const cases: [unknown, string][] = [
      [{ key: '$browser', value: 'Chrome' }, "toString(properties.$browser) = 'Chrome'"],
      [
        { key: 'plan', value: ['pro', 'team'], type: 'person' },
        "toString(person.properties.plan) IN ('pro', 'team')",
      ],
      [{ key: 'n', value: 3, operator: 'gte' }, 'toFloat(properties.n) >= 3'],
      [{ key: 'email', operator: 'is_set', type: 'person' }, 'person.properties.email IS NOT NULL'],
      [
        { key: 'id', value: 7, type: 'cohort' },
        'person_id IN (SELECT person_id FROM cohort_people WHERE cohort_id = 7)',
      ],
      [
        { key: 'industry', value: 'tech', type: 'group', group_type_index: 1 },
        "$group_1 IN (SELECT key FROM groups WHERE index = 1 AND toString(properties.industry) = 'tech')",
      ],
      [
        { key: 'text', value: 'Sign up', type: 'element' },
        `match(elements_chain, '(^|;)[^;]*text="(Sign up)"')`,
      ],
      [{ key: "event = 'x'", type: 'hogql' }, "(event = 'x')"],
      [{ key: 'odd key`', value: "it's" }, "toString(properties.`odd key```) = 'it\\'s'"],
    ];
    for (const [filter, expected] of cases) {
      const expr = propertyFiltersHogQL([filter], 'events')!;
      expect(expr).toBe(expected);
      parses(expr);
    }
  });

  it('AND/OR groups nest; on persons, person filters read the row itself', () => {
    const expr = propertyFiltersHogQL(
      {
        type: 'OR',
        values: [
          { type: 'AND', values: [{ key: 'a', value: '1', type: 'person' }] },
          { key: 'b', value: 'x', operator: 'icontains', type: 'person' },
        ],
      },
      'persons',
    )!;
    expect(expr).toBe("((toString(properties.a) = '1') OR (toString(properties.b) ILIKE '%x%'))");
    parses(expr);
    expect(propertyFiltersHogQL([], 'events')).toBeNull();
  });

  it('refuses what it cannot express, naming the filter', () => {
    expect(() => propertyFiltersHogQL([{ key: 'x', type: 'session' }], 'events')).toThrow(
      /properties\[0\]\.type: "session" is not supported; supported types: event, person/,
    );
    expect(() => propertyFiltersHogQL([{ key: 'x', value: 1 }], 'persons')).toThrow(
      /event filters do not apply to persons/,
    );
    expect(() =>
      propertyFiltersHogQL([{ key: 'x', value: 'a', operator: 'gt' }], 'events'),
    ).toThrow(/gt needs a number/);
    expect(() =>
      propertyFiltersHogQL([{ key: 'selector', value: 'a', type: 'element' }], 'events'),
    ).toThrow(/element filters take tag_name, text, href/);
  });

  it("HogQLFilters: date_to, then date_from ('all' is no bound), then properties", () => {
    const now = new Date('2024-05-10T00:00:00Z');
    const expr = hogqlFiltersExpr(
      {
        dateRange: { date_from: '-7d', date_to: '2024-05-09' },
        properties: [{ key: 'k', value: 'v' }],
      },
      now,
    )!;
    expect(expr).toBe(
      "(timestamp < toDateTime('2024-05-09')) AND (timestamp >= toDateTime('2024-05-03T00:00:00.000Z')) AND (toString(properties.k) = 'v')",
    );
    parses(expr);
    expect(hogqlFiltersExpr({ dateRange: { date_from: 'all' } }, now)).toBeUndefined();
    expect(() => hogqlFiltersExpr({ dateRange: { date_from: 'yesterday-ish' } }, now)).toThrow(
      /date_from/,
    );
  });

  it('string literals survive quotes, backslashes and newlines', () => {
    const text = "a'b\\c\nd";
    expect(parses(hogqlString(text)).value).toBe(text);
  });
});
