/**
 * Compiles parsed HogQL expressions (hogqlParser.ts) to ClickHouse SQL over `events`.
 *
 * Safety: the only SQL text produced comes from this file (column expressions, function names,
 * operators); identifiers are looked up in a whitelist; every literal becomes a `{pN:Type}`
 * placeholder of `Params`. Types are tracked so that comparisons work on the string-typed JSON
 * properties the way HogQL does without property definitions: a property compared with a number
 * is read as a number, with a date-time as a date-time, and so on. Comparisons are null-safe like
 * HogQL's: `=`, `<`, LIKE, IN with a NULL side are false, `!=`, NOT LIKE, NOT IN are true.
 */

import { type Params, propertySql } from '../sqlParams.ts';
import type { Expr } from './hogqlParser.ts';
import { HogQLError } from './hogqlTokenizer.ts';

export type SqlType = 'string' | 'property' | 'number' | 'bool' | 'datetime' | 'date' | 'null';
export type Compiled = Readonly<{
  sql: string;
  type: SqlType;
  /** contains an aggregate call */
  aggregate: boolean;
  /** reads a column outside any aggregate */
  column: boolean;
}>;

const COLUMNS: Record<string, { sql: string; type: SqlType }> = {
  event: { sql: 'event', type: 'string' },
  timestamp: { sql: 'timestamp', type: 'datetime' },
  distinct_id: { sql: 'distinct_id', type: 'string' },
  uuid: { sql: 'toString(uuid)', type: 'string' },
  person_id: { sql: 'toString(person_id)', type: 'string' },
  properties: { sql: 'properties', type: 'string' },
  elements_chain: { sql: 'elements_chain', type: 'string' },
  created_at: { sql: 'created_at', type: 'datetime' },
};
/** Where `person.properties.<key>` may stand (resolved in Postgres by eventPersonFilters.ts). */
export const PERSON_PROPERTIES_WHERE =
  'in where only, as a condition of the top-level AND comparing person.properties.<key> with a constant: =, !=, <, <=, >, >=, [NOT] LIKE, [NOT] ILIKE, [NOT] IN (...), IS [NOT] NULL';
const PERSON_PROPERTIES_HERE = (name: string) =>
  `Unsupported use of "${name}": person properties are supported ${PERSON_PROPERTIES_WHERE}; not inside OR, NOT, functions or arithmetic, nor in select or orderBy`;
export const FIELD_NAMES = [...Object.keys(COLUMNS), 'properties.<key>'];

const value = (sql: string, type: SqlType, parts: readonly Compiled[] = []): Compiled => ({
  sql,
  type,
  aggregate: parts.some((p) => p.aggregate),
  column: parts.some((p) => p.column),
});

const isText = (t: SqlType) => t === 'string' || t === 'property';

function asString(c: Compiled): string {
  if (isText(c.type) || c.type === 'null') return c.sql;
  if (c.type === 'bool') return `if(${c.sql}, 'true', 'false')`;
  return `toString(${c.sql})`;
}
function asNumber(c: Compiled): string {
  if (c.type === 'number' || c.type === 'null') return c.sql;
  if (isText(c.type)) return `toFloat64OrNull(${c.sql})`;
  if (c.type === 'bool') return `toUInt8(${c.sql})`;
  throw new HogQLError(`Cannot use a ${c.type} as a number`);
}
function asDateTime(c: Compiled): string {
  if (c.type === 'datetime' || c.type === 'null') return c.sql;
  if (c.type === 'date') return `toDateTime64(${c.sql}, 6, 'UTC')`;
  if (isText(c.type)) return `parseDateTime64BestEffortOrNull(${c.sql}, 6, 'UTC')`;
  throw new HogQLError(`Cannot use a ${c.type} as a date-time`);
}
function asDate(c: Compiled): string {
  if (c.type === 'date' || c.type === 'null') return c.sql;
  if (c.type === 'datetime') return `toDate(${c.sql})`;
  if (isText(c.type)) return `toDate(parseDateTime64BestEffortOrNull(${c.sql}, 6, 'UTC'))`;
  throw new HogQLError(`Cannot use a ${c.type} as a date`);
}

type Target = 'string' | 'number' | 'bool' | 'datetime' | 'date';
/** The type both sides of a comparison (or every argument of coalesce) are read as. */
function commonType(types: readonly SqlType[]): Target {
  const t = new Set(types.filter((x) => x !== 'null'));
  const temporal = t.has('datetime') || t.has('date');
  if (t.has('number') && temporal) throw new HogQLError('Cannot compare a number with a date');
  if (t.has('bool') && temporal) throw new HogQLError('Cannot compare a boolean with a date');
  if (t.has('number')) return 'number';
  if (t.has('datetime')) return 'datetime';
  if (t.has('date')) return 'date';
  if (t.size > 0 && [...t].every((x) => x === 'bool')) return 'bool';
  return 'string';
}
function coerce(c: Compiled, target: Target): string {
  switch (target) {
    case 'string':
      return asString(c);
    case 'number':
      return asNumber(c);
    case 'datetime':
      return asDateTime(c);
    case 'date':
      return asDate(c);
    case 'bool':
      return c.sql;
  }
}
const typeOfTarget = (t: Target): SqlType => t;

const SQL_COMPARE = {
  '=': 'equals',
  '!=': 'notEquals',
  '<': 'less',
  '<=': 'lessOrEquals',
  '>': 'greater',
  '>=': 'greaterOrEquals',
} as const;
const SQL_LIKE = {
  like: 'like',
  ilike: 'ilike',
  'not like': 'notLike',
  'not ilike': 'notILike',
} as const;
const SQL_ARITH = {
  '+': 'plus',
  '-': 'minus',
  '*': 'multiply',
  '/': 'divide',
  '%': 'modulo',
} as const;

type Fn = Readonly<{
  min: number;
  max: number;
  aggregate?: boolean;
  compile: (args: Compiled[], call: Extract<Expr, { kind: 'call' }>) => Compiled;
}>;

const integerConstant = (c: Compiled, what: string) => {
  if (c.type !== 'number' || c.column || c.aggregate)
    throw new HogQLError(`${what} must be a number constant`);
  return `toInt64(${c.sql})`;
};
const unary = (fn: (c: Compiled) => string, type: SqlType): Fn => ({
  min: 1,
  max: 1,
  compile: ([a]) => value(fn(a!), type, [a!]),
});

const FUNCTIONS: Record<string, Fn> = {
  lower: unary((a) => `lower(${asString(a)})`, 'string'),
  upper: unary((a) => `upper(${asString(a)})`, 'string'),
  trim: unary((a) => `trimBoth(${asString(a)})`, 'string'),
  length: unary((a) => `lengthUTF8(${asString(a)})`, 'number'),
  tostring: unary((a) => asString(a), 'string'),
  toint: unary(
    (a) => (isText(a.type) ? `toInt64OrNull(${a.sql})` : `toInt64(${asNumber(a)})`),
    'number',
  ),
  tofloat: unary(
    (a) => (isText(a.type) ? `toFloat64OrNull(${a.sql})` : `toFloat64(${asNumber(a)})`),
    'number',
  ),
  todate: unary((a) => asDate(a), 'date'),
  todatetime: unary((a) => asDateTime(a), 'datetime'),
  abs: unary((a) => `abs(${asNumber(a)})`, 'number'),
  now: { min: 0, max: 0, compile: () => value(`now64(6, 'UTC')`, 'datetime') },
  today: { min: 0, max: 0, compile: () => value('today()', 'date') },
  coalesce: { min: 1, max: 16, compile: (args) => coalesce(args) },
  ifnull: { min: 2, max: 2, compile: (args) => coalesce(args) },
  concat: {
    min: 1,
    max: 16,
    compile: (args) =>
      value(
        `concat(${args.map((a) => `ifNull(${asString(a)}, '')`).join(', ')}, '')`,
        'string',
        args,
      ),
  },
  substring: {
    min: 2,
    max: 3,
    compile: ([s, offset, length]) =>
      value(
        `substring(${[asString(s!), integerConstant(offset!, 'substring offset'), ...(length ? [integerConstant(length, 'substring length')] : [])].join(', ')})`,
        'string',
        [s!],
      ),
  },
  round: {
    min: 1,
    max: 2,
    compile: ([x, digits]) =>
      value(
        `round(${asNumber(x!)}${digits ? `, ${integerConstant(digits, 'round precision')}` : ''})`,
        'number',
        [x!],
      ),
  },
  count: {
    min: 0,
    max: 1,
    aggregate: true,
    compile: ([x], call) =>
      agg(
        call.distinct ? `count(DISTINCT ${x!.sql})` : x ? `count(${x.sql})` : 'count()',
        'number',
      ),
  },
  min: { min: 1, max: 1, aggregate: true, compile: ([x]) => agg(`min(${x!.sql})`, x!.type) },
  max: { min: 1, max: 1, aggregate: true, compile: ([x]) => agg(`max(${x!.sql})`, x!.type) },
  sum: { min: 1, max: 1, aggregate: true, compile: ([x]) => agg(`sum(${asNumber(x!)})`, 'number') },
  avg: { min: 1, max: 1, aggregate: true, compile: ([x]) => agg(`avg(${asNumber(x!)})`, 'number') },
};
/** How many arguments each function takes, by its lower-case name (what tests iterate). */
export const FUNCTION_ARITIES: Readonly<Record<string, Readonly<{ min: number; max: number }>>> =
  Object.fromEntries(
    Object.entries(FUNCTIONS).map(([name, f]) => [name, { min: f.min, max: f.max }]),
  );
export const FUNCTION_NAMES = [
  'lower',
  'upper',
  'trim',
  'length',
  'toString',
  'toInt',
  'toFloat',
  'toDate',
  'toDateTime',
  'abs',
  'now',
  'today',
  'coalesce',
  'ifNull',
  'concat',
  'substring',
  'round',
  'count',
  'min',
  'max',
  'sum',
  'avg',
];

function agg(sql: string, type: SqlType): Compiled {
  return { sql, type, aggregate: true, column: false };
}
function coalesce(args: Compiled[]): Compiled {
  const target = commonType(args.map((a) => a.type));
  return value(
    `coalesce(${args.map((a) => coerce(a, target)).join(', ')})`,
    typeOfTarget(target),
    args,
  );
}

export class ExprCompiler {
  constructor(private readonly params: Params) {}

  compile(e: Expr, inAggregate = false): Compiled {
    switch (e.kind) {
      case 'constant':
        return this.constant(e.value);
      case 'field':
        return this.field(e.chain);
      case 'call':
        return this.call(e, inAggregate);
      case 'neg': {
        const inner = this.compile(e.expr, inAggregate);
        return value(`negate(${asNumber(inner)})`, 'number', [inner]);
      }
      case 'arith': {
        const [l, r] = [this.compile(e.left, inAggregate), this.compile(e.right, inAggregate)];
        return value(`${SQL_ARITH[e.op]}(${asNumber(l)}, ${asNumber(r)})`, 'number', [l, r]);
      }
      case 'and':
      case 'or': {
        const args = e.args.map((a) => this.condition(a, inAggregate));
        return value(`${e.kind}(${args.map((a) => a.sql).join(', ')})`, 'bool', args);
      }
      case 'not': {
        const inner = this.condition(e.expr, inAggregate);
        return value(`not(${inner.sql})`, 'bool', [inner]);
      }
      case 'isNull': {
        const inner = this.compile(e.expr, inAggregate);
        return value(`${e.negated ? 'isNotNull' : 'isNull'}(${inner.sql})`, 'bool', [inner]);
      }
      case 'compare':
        return this.compare(
          e.op,
          this.compile(e.left, inAggregate),
          this.compile(e.right, inAggregate),
        );
      case 'in':
        return this.in(e, inAggregate);
    }
  }

  /** An expression that must be boolean (WHERE items, AND/OR/NOT operands). */
  condition(e: Expr, inAggregate = false): Compiled {
    const c = this.compile(e, inAggregate);
    if (c.type !== 'bool')
      throw new HogQLError(
        `Expected a condition (a comparison, IN, IS NULL, AND/OR/NOT or true/false), got a ${c.type} expression`,
      );
    return c;
  }

  private constant(v: string | number | bigint | boolean | null): Compiled {
    if (v === null) return value('NULL', 'null');
    if (typeof v === 'boolean') return value(this.params.add(v, 'Bool'), 'bool');
    if (typeof v === 'number' || typeof v === 'bigint') {
      if (typeof v === 'number' && !Number.isFinite(v)) throw new HogQLError('Number out of range');
      return value(this.params.number(v), 'number');
    }
    return value(this.params.string(v), 'string');
  }

  private field(chain: string[]): Compiled {
    const [head, ...rest] = chain;
    if (head === 'properties' && rest.length > 0)
      return {
        sql: propertySql(rest, this.params),
        type: 'property',
        aggregate: false,
        column: true,
      };
    if (head === 'person' && rest[0] === 'properties')
      throw new HogQLError(PERSON_PROPERTIES_HERE(chain.join('.')));
    if (head === 'person' || head === 'pdi' || head === 'person_properties') {
      throw new HogQLError(
        `Unsupported field "${chain.join('.')}": of the person, only person.properties.<key> is supported, ${PERSON_PROPERTIES_WHERE}`,
      );
    }
    const column = rest.length === 0 ? COLUMNS[head!] : undefined;
    if (!column)
      throw new HogQLError(
        `Unknown field "${chain.join('.')}". Supported fields: ${FIELD_NAMES.join(', ')}`,
      );
    return { ...column, aggregate: false, column: true };
  }

  private call(e: Extract<Expr, { kind: 'call' }>, inAggregate: boolean): Compiled {
    const fn = FUNCTIONS[e.name.toLowerCase()];
    if (!fn)
      throw new HogQLError(
        `Unsupported function "${e.name}". Supported functions: ${FUNCTION_NAMES.join(', ')}`,
      );
    if (fn.aggregate && inAggregate)
      throw new HogQLError(`Aggregate "${e.name}" cannot be nested inside another aggregate`);
    if (e.distinct && e.name.toLowerCase() !== 'count')
      throw new HogQLError(`DISTINCT is only supported in count(DISTINCT x)`);
    if (e.star && e.name.toLowerCase() !== 'count')
      throw new HogQLError(`"*" is only supported in count(*)`);
    if (e.distinct && e.args.length !== 1)
      throw new HogQLError('count(DISTINCT x) takes exactly one argument');
    if (e.args.length < fn.min || e.args.length > fn.max) {
      throw new HogQLError(
        `Function "${e.name}" takes ${fn.min === fn.max ? fn.min : `${fn.min} to ${fn.max}`} argument(s), got ${e.args.length}`,
      );
    }
    const args = e.args.map((a) => this.compile(a, inAggregate || fn.aggregate === true));
    return fn.compile(args, e);
  }

  private compare(
    op: Extract<Expr, { kind: 'compare' }>['op'],
    l: Compiled,
    r: Compiled,
  ): Compiled {
    if (op in SQL_LIKE) {
      const like = SQL_LIKE[op as keyof typeof SQL_LIKE];
      const negated = op.startsWith('not');
      return value(`ifNull(${like}(${asString(l)}, ${asString(r)}), ${negated ? 1 : 0})`, 'bool', [
        l,
        r,
      ]);
    }
    const cmp = op as keyof typeof SQL_COMPARE;
    if (l.type === 'null' || r.type === 'null') {
      const other = l.type === 'null' ? r : l;
      if (cmp === '=') return value(`isNull(${other.sql})`, 'bool', [other]);
      if (cmp === '!=') return value(`isNotNull(${other.sql})`, 'bool', [other]);
      throw new HogQLError(`NULL can only be compared with = or != (or use IS NULL)`);
    }
    const target = commonType([l.type, r.type]);
    return value(
      `ifNull(${SQL_COMPARE[cmp]}(${coerce(l, target)}, ${coerce(r, target)}), ${cmp === '!=' ? 1 : 0})`,
      'bool',
      [l, r],
    );
  }

  private in(e: Extract<Expr, { kind: 'in' }>, inAggregate: boolean): Compiled {
    const left = this.compile(e.left, inAggregate);
    const list = e.list.map((item) => {
      if (item.kind !== 'constant')
        throw new HogQLError('IN (...) takes constants only (strings, numbers, booleans)');
      if (item.value === null)
        throw new HogQLError('NULL is not supported inside IN (...); use IS NULL');
      return this.constant(item.value);
    });
    const target = commonType([left.type, ...list.map((c) => c.type)]);
    const sql = `${coerce(left, target)} ${e.negated ? 'NOT IN' : 'IN'} (${list.map((c) => coerce(c, target)).join(', ')})`;
    return value(`ifNull(${sql}, ${e.negated ? 1 : 0})`, 'bool', [left]);
  }
}
