import fc from 'fast-check';

/**
 * Generated analytics and flag-evaluation requests for the bounds fuzz (issue #26): the sizes,
 * cardinalities and intervals that took the server down before — hourly buckets over decades,
 * breakdowns by a value unique per event, huge breakdown limits, correlation over every property,
 * property values of 200,000 characters, thousands of keys and groups — mixed with garbage.
 */

const garbage = fc.oneof(
  fc.constantFrom('', 'null', '[', '{}', '\u0000', '\ud800', '-1', '1e309', 'NaN', '__proto__'),
  fc.string({ maxLength: 30 }),
);

/** the valid values 19 times in 20: a request has many parameters, and one bad one refuses it */
const mostly = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 19, arbitrary: valid }, { weight: 1, arbitrary: garbage });

/** mostly in range, now and then far past it */
const count = (valid: number, far: number) =>
  mostly(
    fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 0, max: valid }) },
      { weight: 1, arbitrary: fc.integer({ min: -5, max: far }) },
    ),
  ).map(String);

const relative = fc
  .tuple(fc.integer({ min: 0, max: 40_000 }), fc.constantFrom('h', 'd', 'w', 'm', 'y'))
  .map(([n, unit]) => `-${n}${unit}`);
const absolute = fc
  .date({ min: new Date('1900-01-01'), max: new Date('2300-01-01'), noInvalidDate: true })
  .map((d) => d.toISOString());
const dateParam = mostly(fc.oneof(relative, absolute, fc.constantFrom('all', 'dStart', 'mStart')));

const entity = fc.record(
  {
    id: fc.constantFrom('$pageview', 'clicked', null, '$identify', 'nope'),
    type: fc.constantFrom('events', 'events', 'events', 'actions'),
    math: fc.constantFrom('total', 'dau', 'total', 'dau', 'weekly_active'),
    order: fc.integer({ min: -1, max: 5 }),
  },
  { requiredKeys: ['id'] },
);
const jsonList = <T>(item: fc.Arbitrary<T>) =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.array(item, { minLength: 1, maxLength: 4 }).map((x) => JSON.stringify(x)),
    },
    { weight: 1, arbitrary: garbage },
  );

/** a property unique per event, ones with few values, a person property, nonsense */
const breakdown = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.constantFrom('$session_id', '$current_url', 'uuid', '$browser', 'plan', 'n'),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 400 }) },
);

const INSIGHT_PATHS = [
  'insights/trend/',
  'insights/funnel/',
  'insights/funnel/correlation/',
  'insights/retention/',
  'insights/path/',
  'persons/trends/',
  'persons/lifecycle/',
  'persons/stickiness/',
] as const;

export type InsightRequest = Readonly<{ path: string; query: string }>;

export const insightRequest = (projectId: number): fc.Arbitrary<InsightRequest> =>
  fc
    .tuple(
      fc.constantFrom(...INSIGHT_PATHS),
      fc.record(
        {
          events: jsonList(entity),
          date_from: dateParam,
          date_to: mostly(fc.integer({ min: 0, max: 3 }).map((n) => `-${n}d`)),
          interval: mostly(fc.constantFrom('hour', 'day', 'week', 'month')),
          breakdown,
          breakdown_type: mostly(fc.constantFrom('event', 'person')),
          breakdown_limit: count(1_000, 10_000_000),
          breakdown_hide_other_aggregation: fc.constantFrom('true', 'false'),
          shown_as: mostly(fc.constantFrom('Volume', 'Stickiness', 'Lifecycle')),
          funnel_window_days: count(100_000, 10_000_000),
          funnel_correlation_type: mostly(
            fc.constantFrom('properties', 'events', 'event_with_properties'),
          ),
          funnel_correlation_names: jsonList(breakdown),
          total_intervals: count(100, 1_000_000),
          lifecycle_type: mostly(fc.constantFrom('new', 'returning', 'resurrecting', 'dormant')),
          stickiness_days: count(30, 100_000),
          period: mostly(fc.constantFrom('Hour', 'Day', 'Week', 'Month')),
          entity_id: fc.constantFrom('$pageview', 'clicked'),
          entity_type: fc.constantFrom('events'),
          breakdown_value: mostly(fc.constantFrom('$$_posthog_breakdown_other_$$', 'Chrome')),
          date: dateParam,
        },
        { requiredKeys: [] },
      ),
    )
    .map(([path, params]) => ({
      path: `/api/projects/${projectId}/${path}`,
      query: new URLSearchParams(params as Record<string, string>).toString(),
    }));

/** one property value of up to 200,000 characters, or up to 12,000 keys, or nonsense */
const properties = fc.oneof(
  fc
    .tuple(fc.integer({ min: 0, max: 200_000 }), fc.constantFrom('a', 'ab@', '(', '\u00e9'))
    .map(([n, unit]) => ({ email: unit.repeat(Math.ceil(n / unit.length)), plan: 'pro' })),
  fc
    .integer({ min: 0, max: 12_000 })
    .map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 10 }),
  garbage,
);
const groups = fc.oneof(
  fc
    .integer({ min: 0, max: 300 })
    .map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`type${i}`, `key${i}`]))),
  fc.constant({ company: 'acme' }),
  garbage,
);

export type FlagsRequest = Readonly<{ path: string; body: string }>;

export const flagsRequest = (projectApiKey: string): fc.Arbitrary<FlagsRequest> =>
  fc
    .tuple(
      fc.constantFrom('/flags/?v=2', '/decide/?v=3', '/decide/?v=2'),
      fc.record(
        {
          token: fc.oneof({ weight: 6, arbitrary: fc.constant(projectApiKey) }, garbage),
          distinct_id: fc.oneof(fc.uuid(), fc.string({ unit: 'grapheme', maxLength: 300 })),
          person_properties: properties,
          groups,
          group_properties: fc.oneof(
            groups.map((g) =>
              typeof g === 'object'
                ? Object.fromEntries(Object.keys(g).map((k) => [k, { n: 1 }]))
                : g,
            ),
            properties,
          ),
        },
        { requiredKeys: ['token', 'distinct_id'] },
      ),
    )
    .map(([path, body]) => ({ path, body: JSON.stringify(body) }));
