import fc from 'fast-check';
import { MAX_DEPTH } from '../../projections/hogql/eventsExpr.ts';

/** A sample of allowed functions with their usual argument counts (the compiler leaves counts to ClickHouse). */
const FUNCTION_ARITIES: Readonly<Record<string, Readonly<{ min: number; max: number }>>> = {
  lower: { min: 1, max: 1 },
  upper: { min: 1, max: 1 },
  trim: { min: 1, max: 1 },
  length: { min: 1, max: 1 },
  tostring: { min: 1, max: 1 },
  toint: { min: 1, max: 1 },
  tofloat: { min: 1, max: 1 },
  todate: { min: 1, max: 1 },
  todatetime: { min: 1, max: 1 },
  abs: { min: 1, max: 1 },
  now: { min: 0, max: 0 },
  today: { min: 0, max: 0 },
  coalesce: { min: 1, max: 16 },
  ifnull: { min: 2, max: 2 },
  concat: { min: 1, max: 16 },
  substring: { min: 2, max: 3 },
  round: { min: 1, max: 2 },
  count: { min: 0, max: 1 },
  min: { min: 1, max: 1 },
  max: { min: 1, max: 1 },
  sum: { min: 1, max: 1 },
  avg: { min: 1, max: 1 },
  tostartofday: { min: 1, max: 1 },
};

/**
 * Generated HogQL text for the fuzz suite: expressions with a sample of the compiler's allowed
 * functions (FUNCTION_ARITIES) called with too few, the right and too many arguments of any type,
 * nesting around the depth limit and far past it, and literals past what 64-bit integers and
 * floats hold. Text, not trees: the parser must meet what a user could type.
 */

/** Literals at and past the edges of Int64, UInt64 and Float64, and float names ClickHouse knows. */
const edgeNumber = fc.oneof(
  fc.constantFrom(
    '9223372036854775807',
    '-9223372036854775808',
    '9223372036854775808',
    '-9223372036854775809',
    '18446744073709551615',
    '18446744073709551616',
    '-18446744073709551616',
    '9007199254740993',
    '1e400',
    '-1e309',
    '1e308',
    '1.7976931348623157e308',
    '1e-400',
    '4.9e-324',
    '0.0000000000000000000001',
    '0',
    '-0',
  ),
  // long digit strings: integers, fractions, negatives
  fc
    .tuple(fc.integer({ min: 16, max: 450 }), fc.constantFrom('', '-', '0.', '-0.'))
    .map(([n, sign]) => `${sign}${'9'.repeat(n)}`),
);
const atom = fc.oneof(
  fc.constantFrom(
    'event',
    'timestamp',
    'distinct_id',
    'uuid',
    'person_id',
    'properties',
    'elements_chain',
    'created_at',
    'properties.n',
    'properties.$browser',
    'properties.a.b',
    "properties['x y']",
    'person.properties.email',
    'nan',
    'inf',
    'NaN',
    'true',
    'false',
    'null',
    "''",
    "'2024-01-01'",
    "'%'",
    "'\\\\'",
  ),
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => String(d)),
  fc.string({ maxLength: 8 }).map((s) => `'${s.replace(/[\\']/g, '')}'`),
  edgeNumber,
);

const functionNames = [...Object.keys(FUNCTION_ARITIES), 'sleep', 'toInt64', 'IFNULL', 'Count'];
/** An argument count around the function's own: too few, its bounds, too many, or any. */
const argumentCount = (name: string) => {
  const arity = FUNCTION_ARITIES[name.toLowerCase()] ?? { min: 0, max: 3 };
  return fc.oneof(
    fc.constantFrom(arity.min, arity.max, Math.max(0, arity.min - 1), arity.max + 1),
    fc.integer({ min: 0, max: 5 }),
  );
};

const BINARY = ['+', '-', '*', '/', '%', '=', '!=', '<', '>=', 'LIKE', 'NOT ILIKE', 'AND', 'OR'];

const { expr } = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    atom,
    fc
      .constantFrom(...functionNames)
      .chain((name) =>
        fc
          .tuple(argumentCount(name), fc.array(tie('expr'), { maxLength: 5 }), fc.boolean())
          .map(
            ([n, args, distinct]) =>
              `${name}(${distinct && name === 'count' ? 'DISTINCT ' : ''}${Array.from({ length: n }, (_, i) => args[i] ?? 'event').join(', ')})`,
          ),
      ),
    fc
      .tuple(tie('expr'), fc.constantFrom(...BINARY), tie('expr'))
      .map(([a, op, b]) => `${a} ${op} ${b}`),
    fc.tuple(fc.constantFrom('NOT ', '-', '- '), tie('expr')).map(([op, a]) => `${op}${a}`),
    tie('expr').map((a) => `(${a})`),
    tie('expr').map((a) => `${a} IS NOT NULL`),
    fc
      .tuple(tie('expr'), fc.array(atom, { minLength: 1, maxLength: 4 }))
      .map(([a, list]) => `${a} IN (${list.join(', ')})`),
  ),
}));

/** n levels of one way to nest, around the limit (±5) or far past it. */
const deep = fc
  .tuple(
    fc.oneof(
      fc.integer({ min: MAX_DEPTH - 5, max: MAX_DEPTH + 5 }),
      fc.integer({ min: 0, max: 2_000 }),
    ),
    fc.constantFrom('not', 'parens', 'minus', 'plus', 'times', 'call', 'compare'),
    fc.constantFrom(...functionNames),
  )
  .map(([n, form, name]) => {
    switch (form) {
      case 'not':
        return `${'NOT '.repeat(n)}event = 'a'`;
      case 'parens':
        return `${'('.repeat(n)}1${')'.repeat(n)}`;
      case 'minus':
        return `${'- '.repeat(n)}properties.n`;
      case 'plus':
        return `properties.n${' + 1'.repeat(n)}`;
      case 'times':
        return `1${'*1'.repeat(n)}`;
      case 'call':
        return `${`${name}(`.repeat(n)}event${')'.repeat(n)}`;
      default:
        return `${'('.repeat(n)}event = 'a'${") = 'a'".repeat(n)}`;
    }
  });

/** One HogQL expression: mostly generated trees, some deep nestings. */
export const hogqlExpression = fc.oneof(
  { weight: 3, arbitrary: expr },
  { weight: 1, arbitrary: deep },
);

/** Where an expression goes: every request parameter that parses HogQL. */
export const hogqlRequest = fc.record({
  target: fc.constantFrom(
    'select',
    'select+aggregate',
    'where',
    'orderBy',
    'events properties',
    'trend properties',
  ),
  expression: hogqlExpression,
});
export type HogQLRequest = typeof hogqlRequest extends fc.Arbitrary<infer R> ? R : never;

/** The path and query string of a generated request against project `projectId`. */
export function hogqlPath(projectId: number, { target, expression }: HogQLRequest): string {
  const json = (v: unknown) => encodeURIComponent(JSON.stringify(v));
  const events = `/api/projects/${projectId}/events/`;
  switch (target) {
    case 'select':
      return `${events}?select=${json([expression])}`;
    case 'select+aggregate':
      return `${events}?select=${json([expression, 'count()'])}&orderBy=${json([expression])}`;
    case 'where':
      return `${events}?where=${json([expression])}`;
    case 'orderBy':
      return `${events}?orderBy=${json([expression])}`;
    case 'events properties':
      return `${events}?properties=${json([{ type: 'hogql', key: expression }])}`;
    case 'trend properties':
      return `/api/projects/${projectId}/insights/trend/?events=${json([{ id: '$pageview' }])}&properties=${json([{ type: 'hogql', key: expression }])}`;
  }
}
