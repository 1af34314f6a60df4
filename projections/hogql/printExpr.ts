import { HogQLError, type Span } from './errors.ts';
import { identifier, stringLiteral } from './fields.ts';
import { knownFunction } from './functions.ts';
import type { Node } from './parser.ts';

/** Deepest expression the printer follows (ClickHouse's own max_ast_depth stops the rest). */
export const MAX_DEPTH = 200;

export const spanOf = (node: Node): Span => ({
  ...(node.start ? { start: node.start.offset } : {}),
  ...(node.end ? { end: node.end.offset } : {}),
});

/** What expression printing needs from the SELECT it is in (printSelect.ts). */
export interface ExprHost {
  field(node: Node, lambdaArgs: ReadonlySet<string>): string;
  subquery(node: Node): string;
  placeholder(node: Node, lambdaArgs: ReadonlySet<string>, depth: number): string;
  /** `x IN cte`: the CTE as a subquery, or undefined when the field is not a CTE's name */
  inTarget(node: Node, lambdaArgs: ReadonlySet<string>): string | undefined;
}

const COMPARE: Readonly<Record<string, string>> = {
  '==': '=',
  '!=': '!=',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
  like: 'LIKE',
  ilike: 'ILIKE',
  'not like': 'NOT LIKE',
  'not ilike': 'NOT ILIKE',
  in: 'IN',
  'not in': 'NOT IN',
  'global in': 'IN',
  'global not in': 'NOT IN',
};
const REGEX: Readonly<Record<string, string>> = {
  '=~': 'match(%l, %r)',
  '!~': 'not(match(%l, %r))',
  '=~*': "match(%l, concat('(?i)', %r))",
  '!~*': "not(match(%l, concat('(?i)', %r)))",
};
const ARITHMETIC = new Set(['+', '-', '*', '/', '%']);

/** A constant as a ClickHouse literal: strings escaped, numbers as written, booleans and NULL. */
export function constant(value: unknown, span: Span): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    // only the keywords inf and nan get here (numbers.ts refuses an overflowing literal)
    if (Number.isNaN(value)) return 'nan';
    if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
    // a whole number past 2^53 here was written as a float (1e19; integers are bigints): keep
    // it one, as ClickHouse reads 1e19, rather than digits it would read as UInt64
    return Number.isInteger(value) && !Number.isSafeInteger(value)
      ? value.toExponential()
      : String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return stringLiteral(value);
  if (Array.isArray(value)) return `[${value.map((v) => constant(v, span)).join(', ')}]`;
  throw new HogQLError('Only strings, numbers, booleans, null and arrays of them are values', span);
}

/** Prints one HogQL expression as ClickHouse SQL. */
export function printExpr(
  host: ExprHost,
  node: Node,
  lambdaArgs: ReadonlySet<string> = new Set(),
  depth = 0,
): string {
  if (depth > MAX_DEPTH) throw new HogQLError('The query is nested too deeply', spanOf(node));
  const p = (n: Node, args = lambdaArgs) => printExpr(host, n, args, depth + 1);
  const list = (ns: readonly Node[] | null | undefined) => (ns ?? []).map((n) => p(n)).join(', ');
  const span = spanOf(node);
  switch (node.node) {
    case 'Constant':
      return constant(node.value, span);
    case 'Field':
      return host.field(node, lambdaArgs);
    case 'Alias':
      if (node.hidden) return p(node.expr);
      return `${p(node.expr)} AS ${identifier(String(node.alias))}`;
    case 'And':
      return `and(${list(node.exprs)})`;
    case 'Or':
      return `or(${list(node.exprs)})`;
    case 'Not':
      return `not(${p(node.expr)})`;
    case 'ArithmeticOperation':
      if (!ARITHMETIC.has(node.op)) break;
      return `(${p(node.left)} ${node.op} ${p(node.right)})`;
    case 'CompareOperation': {
      const l = p(node.left);
      if (node.right?.node === 'Constant' && node.right.value === null) {
        if (node.op === '==') return `isNull(${l})`;
        if (node.op === '!=') return `isNotNull(${l})`;
      }
      const regex = REGEX[node.op];
      if (regex) {
        const r = p(node.right);
        // function replacers: the printed SQL may hold `$'`, a pattern to String.replace
        return regex.replace('%l', () => l).replace('%r', () => r);
      }
      const op = COMPARE[node.op];
      if (!op) break;
      const r = p(node.right);
      // `x IN name`: ClickHouse would read `name` as a table of the database; only a CTE may be
      // named there, any other field is a one-item list
      if ((op === 'IN' || op === 'NOT IN') && node.right.node === 'Field')
        return `(${l} ${op} ${host.inTarget(node.right, lambdaArgs) ?? `tuple(${r})`})`;
      // `x IN (1, 2)`: the tuple's parentheses are the list's
      const right =
        (op === 'IN' || op === 'NOT IN') && node.right.node === 'Tuple'
          ? r.replace(/^tuple/, '')
          : r;
      return `(${l} ${op} ${right})`;
    }
    case 'BetweenExpr':
      return `(${p(node.expr)} ${node.negated ? 'NOT ' : ''}BETWEEN ${p(node.low)} AND ${p(node.high)})`;
    case 'Array':
      return `[${list(node.exprs)}]`;
    case 'Tuple':
      return `tuple(${list(node.exprs)})`;
    case 'ArrayAccess': {
      // properties['$browser'] is the property, as properties.$browser
      const path = propertyPath(node);
      if (path) return host.field(path, lambdaArgs);
      return `${p(node.array)}[${p(node.property)}]`;
    }
    case 'TupleAccess':
      return `tupleElement(${p(node.tuple)}, ${Number(node.index)})`;
    case 'Lambda': {
      const args: string[] = node.args ?? [];
      const inner = new Set([...lambdaArgs, ...args]);
      const head =
        args.length === 1 ? identifier(args[0]!) : `(${args.map(identifier).join(', ')})`;
      return `(${head} -> ${p(node.expr, inner)})`;
    }
    case 'Placeholder':
      return host.placeholder(node, lambdaArgs, depth + 1);
    case 'SelectQuery':
    case 'SelectSetQuery':
      return `(${host.subquery(node)})`;
    case 'Call':
      return call(node, list, span);
    case 'WindowFunction':
      return windowFunction(host, node, list, lambdaArgs, depth, span);
  }
  throw new HogQLError(`Unsupported HogQL: ${node.node}${node.op ? ` ${node.op}` : ''}`, span);
}

/** `properties['a']['b']` (any depth of string keys on a properties field) as the field `properties.a.b`. */
function propertyPath(node: Node): Node | undefined {
  const keys: string[] = [];
  let n = node;
  while (
    n.node === 'ArrayAccess' &&
    n.property?.node === 'Constant' &&
    typeof n.property.value === 'string'
  ) {
    keys.unshift(n.property.value);
    n = n.array;
  }
  if (keys.length === 0 || n.node !== 'Field' || !(n.chain ?? []).includes('properties'))
    return undefined;
  return { ...n, chain: [...n.chain, ...keys] };
}

const INTERVAL_UNITS: Readonly<Record<string, string>> = {
  second: 'Second',
  minute: 'Minute',
  hour: 'Hour',
  day: 'Day',
  week: 'Week',
  month: 'Month',
  quarter: 'Quarter',
  year: 'Year',
};

type Print = (n: Node) => string;
type List = (ns: readonly Node[] | null | undefined) => string;

/** PostHog's own HogQL functions with no ClickHouse namesake, printed as PostHog prints them. */
const POSTHOG_FUNCTIONS: Readonly<Record<string, (args: string[]) => string>> = {
  // a HogQLX tag the app draws as a chart; the data rides in the tuple
  sparkline: ([data]) => `tuple('__hx_tag', 'Sparkline', 'data', ${data})`,
  // the user agent's kind of traffic (PostHog's web analytics), by the usual markers
  getTrafficType: ([ua]) =>
    `multiIf(match(ifNull(${ua}, ''), '(?i)(gptbot|chatgpt|oai-searchbot|claude|anthropic|perplexity)'), 'AI Agent', match(ifNull(${ua}, ''), '(?i)(headless|phantomjs|selenium|puppeteer|playwright|curl/|wget/|python-requests)'), 'Automation', match(ifNull(${ua}, ''), '(?i)(bot|crawl|spider|slurp)'), 'Bot', 'Regular')`,
};

function call(node: Node, list: List, span: Span): string {
  const name = String(node.name);
  const own = Object.hasOwn(POSTHOG_FUNCTIONS, name) ? POSTHOG_FUNCTIONS[name] : undefined;
  const known = own ? undefined : knownFunction(name);
  if (!own && !known) throw new HogQLError(`Unsupported function: ${name}`, span);
  // ClickHouse reads f(DISTINCT x) as the -Distinct combinator: on a non-aggregate it names a
  // function that does not exist (toStringDistinct); say what is wrong instead
  if (node.distinct && !known?.aggregate)
    throw new HogQLError(`DISTINCT is only allowed in aggregate functions, not in ${name}()`, span);
  if (own) {
    if ((node.args ?? []).length !== 1) throw new HogQLError(`${name} takes one argument`, span);
    return own([list(node.args)]);
  }
  if (!known) throw new HogQLError(`Unsupported function: ${name}`, span);
  if (node.filter_expr)
    throw new HogQLError(`FILTER (WHERE …) is not supported; use ${name}If`, span);
  const args: Node[] = node.args ?? [];
  if (known.castTo) return cast(name, known.castTo, args, list, span);
  // PostHog prints concat's arguments as text with null as '' (its printer wraps each)
  if (known.clickhouse === 'concat')
    return `concat(${args.map((a) => `ifNull(toString(${list([a])}), '')`).join(', ')})`;
  // dateAdd('day', 1, d): the unit as a string, which ClickHouse's dateAdd does not take
  const unit =
    args[0]?.node === 'Constant' ? INTERVAL_UNITS[String(args[0].value).toLowerCase()] : undefined;
  if (/^date_?(add|sub)$/i.test(name) && args.length === 3 && unit) {
    const op = /sub/i.test(name) ? '-' : '+';
    return `(${list([args[2]!])} ${op} toInterval${unit}(${list([args[1]!])}))`;
  }
  const params = node.params ? `(${list(node.params)})` : '';
  const distinct = node.distinct ? 'DISTINCT ' : '';
  return `${known.clickhouse}${params}(${distinct}${list(node.args)})`;
}

/** toInt(x) and its kin as accurateCastOrNull(x, 'Int64'), as PostHog prints them (functions.ts CASTS). */
function cast(name: string, type: string, args: readonly Node[], list: List, span: Span): string {
  const decimal = type === 'Decimal64';
  if (args.length !== (decimal ? 2 : 1))
    throw new HogQLError(
      `${name} takes ${decimal ? 'two arguments, a value and a scale' : 'one argument'}`,
      span,
    );
  const value = list(args.slice(0, 1));
  if (!decimal) return `accurateCastOrNull(${value}, '${type}')`;
  const scale = args[1]!;
  if (
    scale.node !== 'Constant' ||
    !Number.isInteger(scale.value) ||
    scale.value < 0 ||
    scale.value > 18
  )
    throw new HogQLError(`${name}'s scale must be a whole number from 0 to 18`, spanOf(scale));
  return `accurateCastOrNull(${value}, 'Decimal64(${scale.value})')`;
}

/** The body of OVER (…): PARTITION BY, ORDER BY and the frame. */
export function windowSpec(p: Print, w: Node): string {
  const list: List = (ns) => (ns ?? []).map(p).join(', ');
  const parts: string[] = [];
  if (w.partition_by?.length) parts.push(`PARTITION BY ${list(w.partition_by)}`);
  if (w.order_by?.length) parts.push(`ORDER BY ${orderBy(p, w.order_by)}`);
  if (w.frame_method) {
    const bound = (b: Node | null | undefined) => {
      if (!b) return 'CURRENT ROW';
      if (b.frame_type === 'CURRENT ROW') return 'CURRENT ROW';
      const v =
        b.frame_value === null || b.frame_value === undefined
          ? 'UNBOUNDED'
          : String(Number(b.frame_value));
      return `${v} ${b.frame_type === 'FOLLOWING' ? 'FOLLOWING' : 'PRECEDING'}`;
    };
    const method = w.frame_method === 'RANGE' ? 'RANGE' : 'ROWS';
    parts.push(
      w.frame_end
        ? `${method} BETWEEN ${bound(w.frame_start)} AND ${bound(w.frame_end)}`
        : `${method} ${bound(w.frame_start)}`,
    );
  }
  return parts.join(' ');
}

export const orderBy = (p: Print, items: readonly Node[]): string =>
  items.map((o) => `${p(o.expr)} ${o.order === 'DESC' ? 'DESC' : 'ASC'}`).join(', ');

function windowFunction(
  host: ExprHost,
  node: Node,
  list: List,
  lambdaArgs: ReadonlySet<string>,
  depth: number,
  span: Span,
): string {
  const name = String(node.name);
  const known = knownFunction(name);
  if (!known) throw new HogQLError(`Unsupported window function: ${name}`, span);
  const args = list(node.exprs);
  const params = node.args?.length ? `(${list(node.args)})` : '';
  const over = node.over_identifier
    ? identifier(String(node.over_identifier))
    : `(${windowSpec((n) => printExpr(host, n, lambdaArgs, depth + 1), node.over_expr ?? { node: 'WindowExpr' })})`;
  return `${known.clickhouse}${params}(${args}) OVER ${over}`;
}
