/**
 * Person conditions of the events list: `properties` filters of `type: "person"` and HogQL `where`
 * conditions on `person.properties.<key>`. Events live in ClickHouse, persons in Postgres, so each
 * person condition is evaluated against the persons read model (project-scoped, through
 * `projections/persons/personsReader.ts`) and becomes a set of distinct ids, which restricts the
 * ClickHouse query as `has({pN:Array(String)}, distinct_id)`. An event matches a person condition
 * when the person its distinct id belongs to *now* matches (merged persons: the events of every
 * distinct id of the person).
 *
 * Events without a person (personless, or a deleted person) are treated as a person with no
 * properties, as PostHog's join does: they match `is_not_set`, `is_not`, `!=`, NOT LIKE, … and
 * not `exact`, `=`, `>`, …. When the empty person matches, the condition is sent as the
 * complement: `not(has({non-matching ids}, distinct_id))`.
 *
 * Where person conditions may stand:
 * - `properties`: a list, or AND groups, mixing person and event filters (all AND-ed); a group of
 *   person filters only (AND or OR, nested) is one condition; an OR group with both kinds → 400.
 * - `where`: `person.properties.<key> <op> <constant>` as a condition of an item's top-level AND
 *   (see `PERSON_PROPERTIES_WHERE`); anywhere else the HogQL compiler answers 400.
 */
import type pg from 'pg';
import type { WhereItem } from '../../projections/events/eventsHogQL.ts';
import { parseWhere } from '../../projections/events/eventsHogQL.ts';
import type { PersonIdSet } from '../../projections/events/eventsReader.ts';
import { prepareHogQLFilters } from '../../projections/events/propertyFilters.ts';
import { about, HogQLInputError as HogQLError } from '../../projections/hogql/eventsExpr.ts';
import type { Node as Expr } from '../../projections/hogql/parser.ts';
import { type PersonsReader, personsReader } from '../../projections/persons/personsReader.ts';
import {
  FilterError,
  isRecord,
  MAX_DEPTH,
  MAX_FILTERS,
} from '../../projections/shared/propertyFilterTree.ts';

/** One person condition before it is resolved: a personFilters input, possibly negated. */
type PersonCondition = Readonly<{
  filters: unknown;
  negate: boolean;
  /** where it came from, for errors */
  attr: 'properties' | 'where';
  path: string;
}>;

/** Largest set of distinct ids one condition may send to ClickHouse. */
export const MAX_PERSON_FILTER_IDS = 100_000;
const isGroup = (n: Record<string, unknown>) =>
  (n.type === 'AND' || n.type === 'OR') && 'values' in n && Array.isArray(n.values);

// ---------------------------------------------------------------------------------------------
// properties

type Kind = 'none' | 'person' | 'event' | 'mixed';
const merge = (a: Kind, b: Kind): Kind =>
  a === 'none' ? b : b === 'none' || a === b ? a : 'mixed';

class PropertiesSplitter {
  private count = 0;
  readonly person: PersonCondition[] = [];

  /**
   * What the node holds. Anything malformed counts as `event`: the event compiler names the problem.
   * `check`: enforce the depth and filter-count limits (once, on the whole input).
   */
  kind(node: unknown, depth = 0, check = false): Kind {
    if (check && depth > MAX_DEPTH)
      throw new FilterError(`properties: groups nested deeper than ${MAX_DEPTH}`);
    const items = Array.isArray(node)
      ? node
      : isRecord(node) && isGroup(node)
        ? (node.values as unknown[])
        : null;
    if (items)
      return items.reduce<Kind>((k, item) => merge(k, this.kind(item, depth + 1, check)), 'none');
    if (check && ++this.count > MAX_FILTERS)
      throw new FilterError(`properties: more than ${MAX_FILTERS} filters`);
    return isRecord(node) && node.type === 'person' ? 'person' : 'event';
  }

  /**
   * The node with its person parts replaced by an empty AND group (which the event compiler reads
   * as `true`, keeping every other filter at its path), or null when all of it is person filters.
   */
  split(node: unknown, path: string): unknown {
    const kind = this.kind(node);
    if (kind === 'none' || kind === 'event') return node;
    if (kind === 'person') {
      this.person.push({ filters: node, negate: false, attr: 'properties', path });
      return null;
    }
    if (isRecord(node) && node.type === 'OR') {
      throw new FilterError(
        `${path}: an OR group mixing person and event filters is not supported (person filters are evaluated against the persons ` +
          'table apart from the events); put only person filters or only event filters in an OR group, and AND them together',
      );
    }
    const items = Array.isArray(node) ? node : (node as { values: unknown[] }).values;
    const inner = Array.isArray(node) ? path : `${path}.values`;
    const rest = items.map(
      (item, i) => this.split(item, `${inner}[${i}]`) ?? { type: 'AND', values: [] },
    );
    return Array.isArray(node) ? rest : { ...(node as Record<string, unknown>), values: rest };
  }
}

/** Takes the person filters out of `properties` (see the file comment). */
export function splitPropertyFilters(input: unknown): {
  properties: unknown;
  person: PersonCondition[];
} {
  if (input === null || input === undefined) return { properties: input, person: [] };
  const splitter = new PropertiesSplitter();
  splitter.kind(input, 0, true);
  const properties = splitter.split(input, 'properties');
  return { properties: splitter.person.length === 0 ? input : properties, person: splitter.person };
}

// ---------------------------------------------------------------------------------------------
// where

type Filter = Record<string, unknown>;
const filter = (key: string, operator: string, value?: unknown): Filter => ({
  key,
  operator,
  type: 'person',
  ...(value !== undefined ? { value } : {}),
});
/** numeric equality, as HogQL compares a property with a number: toFloat64OrNull(property) = n */
const numberEquals = (key: string, n: number): Filter => ({
  type: 'AND',
  values: [filter(key, 'gte', n), filter(key, 'lte', n)],
});

const FLIP = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '==': '==', '!=': '!=' } as const;
const ORDER = { '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' } as const;

/** A LIKE pattern (`%`, `_`, backslash escapes) as an anchored Postgres regular expression. */
export function likeToRegex(pattern: string, caseInsensitive: boolean): string {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    let c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) c = pattern[++i]!;
    else if (c === '%') {
      re += '.*';
      continue;
    } else if (c === '_') {
      re += '.';
      continue;
    }
    re += /[\\^$.|?*+()[\]{}]/.test(c) ? `\\${c}` : c;
  }
  return `${caseInsensitive ? '(?i)' : ''}^${re}$`;
}

/** `person.properties.<key>` → key; null for anything else (other person fields fail in the compiler). */
function personKey(e: Expr): string | null {
  // person.properties['$tier'] is person.properties.$tier
  if (
    e.node === 'ArrayAccess' &&
    e.property?.node === 'Constant' &&
    typeof e.property.value === 'string' &&
    e.array?.node === 'Field'
  )
    return personKey({ ...e.array, chain: [...e.array.chain, e.property.value] });
  if (
    e.node !== 'Field' ||
    e.chain[0] !== 'person' ||
    e.chain[1] !== 'properties' ||
    e.chain.length < 3
  )
    return null;
  if (e.chain.length > 3)
    throw new HogQLError(
      `Unsupported field "${e.chain.join('.')}": nested person properties are not supported; use person.properties.<key>`,
    );
  return e.chain[2]!;
}

type Constant = string | number | boolean | null;
function constant(e: Expr, key: string): Constant {
  if (e.node !== 'Constant' || (typeof e.value === 'object' && e.value !== null))
    throw new HogQLError(
      `person.properties.${key} can only be compared with a constant (a string, number, boolean or NULL)`,
    );
  // person properties compare as floats (numberEquals): a 64-bit integer literal becomes its float
  return typeof e.value === 'bigint' ? Number(e.value) : e.value;
}
const asText = (v: string | boolean) => (typeof v === 'boolean' ? (v ? 'true' : 'false') : v);

/**
 * One conjunct as a person condition, or null when it is not one (then it stays an event
 * condition; a person field deeper inside fails in the compiler). Mapping (same results as the
 * HogQL compiler gives event properties, the property read as text):
 *   = 'a' / true → exact; = n → gte n AND lte n (numeric); != → the negation of =;
 *   < <= > >= n → lt lte gt gte (numeric; text ordering → 400);
 *   LIKE / ILIKE 'p' → regex of the anchored pattern (`(?i)` for ILIKE); NOT … → the negation;
 *   IN (strings/booleans) → exact list; IN (numbers) → OR of numeric equalities; NOT IN → negation;
 *   IS NULL / = NULL → is_not_set; IS NOT NULL / != NULL → is_set.
 */
function personConjunct(e: Expr): { filters: Filter; negate: boolean } | null {
  if (e.node !== 'CompareOperation') return null;
  const op = String(e.op);
  if (op === 'in' || op === 'not in') {
    const key = personKey(e.left);
    if (key === null) return null;
    const items: Expr[] =
      e.right.node === 'Tuple' || e.right.node === 'Array' ? e.right.exprs : [e.right];
    const values = items.map((item) => {
      const v = constant(item, key);
      if (v === null) throw new HogQLError('NULL is not supported inside IN (...); use IS NULL');
      return v;
    });
    const numbers = values.filter((v): v is number => typeof v === 'number');
    if (numbers.length > 0 && numbers.length < values.length)
      throw new HogQLError(`person.properties.${key} IN (...): use only numbers or only strings`);
    const filters =
      numbers.length > 0
        ? { type: 'OR', values: numbers.map((n) => numberEquals(key, n)) }
        : filter(
            key,
            'exact',
            values.map((v) => asText(v as string | boolean)),
          );
    return { filters, negate: op === 'not in' };
  }
  const [left, right] = [personKey(e.left), personKey(e.right)];
  if (left === null && right === null) return null;
  if (left !== null && right !== null)
    throw new HogQLError('Comparing two person properties is not supported');
  const like = op === 'like' || op === 'ilike' || op === 'not like' || op === 'not ilike';
  if (right !== null && like)
    throw new HogQLError(`person.properties.${right} must be on the left of ${op.toUpperCase()}`);
  const key = (left ?? right)!;
  const value = constant(left !== null ? e.right : e.left, key);
  if (like) {
    if (typeof value !== 'string')
      throw new HogQLError(`${op.toUpperCase()} needs a string pattern`);
    return {
      filters: filter(key, 'regex', likeToRegex(value, op.endsWith('ilike'))),
      negate: op.startsWith('not'),
    };
  }
  if (!(op in FLIP)) return null;
  const cmp = left !== null ? (op as keyof typeof FLIP) : FLIP[op as keyof typeof FLIP];
  if (value === null) {
    if (cmp === '==' || cmp === '!=')
      return { filters: filter(key, cmp === '==' ? 'is_not_set' : 'is_set'), negate: false };
    throw new HogQLError('NULL can only be compared with = or != (or use IS NULL)');
  }
  if (cmp === '==' || cmp === '!=') {
    return {
      filters:
        typeof value === 'number' ? numberEquals(key, value) : filter(key, 'exact', asText(value)),
      negate: cmp === '!=',
    };
  }
  if (typeof value !== 'number')
    throw new HogQLError(
      `person.properties.${key} ${cmp} …: ordering comparisons of person properties need a number`,
    );
  return { filters: filter(key, ORDER[cmp], value), negate: false };
}

const conjuncts = (e: Expr): Expr[] => (e.node === 'And' ? e.exprs.flatMap(conjuncts) : [e]);

/** Parses the `where` items and takes the person conditions out of their top-level AND. */
export async function splitWhere(items: readonly string[] | undefined): Promise<{
  where: WhereItem[] | undefined;
  person: PersonCondition[];
}> {
  if (items === undefined) return { where: undefined, person: [] };
  const person: PersonCondition[] = [];
  const where: WhereItem[] = [];
  for (const { text, expr } of await parseWhere(items)) {
    where.push(
      await about('where', text, (): WhereItem => {
        if (expr === null) return { text, expr };
        const all = conjuncts(expr);
        const rest: Expr[] = [];
        for (const c of all) {
          const p = personConjunct(c);
          if (p) person.push({ ...p, attr: 'where', path: `where "${text}"` });
          else rest.push(c);
        }
        if (rest.length === all.length) return { text, expr };
        return {
          text,
          expr:
            rest.length === 0 ? null : rest.length === 1 ? rest[0]! : { node: 'And', exprs: rest },
        };
      }),
    );
  }
  return { where, person };
}

// ---------------------------------------------------------------------------------------------
// resolution in Postgres

function fail(c: PersonCondition, message: string): never {
  if (c.attr === 'properties') throw new FilterError(message.replace(/^properties/, c.path));
  throw new HogQLError(`${c.path}: ${message}`, 'where');
}

/** One condition → the distinct ids it selects (or, when a person-less event would match, those it rejects). */
async function resolve(
  persons: PersonsReader,
  projectId: number,
  now: Date,
  c: PersonCondition,
): Promise<PersonIdSet> {
  let ids: string[], emptyMatches: boolean;
  try {
    const empty = await persons.emptyPersonMatches(c.filters, now);
    if (empty === null) return { ids: [], negated: true }; // restricts nothing
    // the condition an event's person must meet; a person-less event meets it when `emptyMatches`
    emptyMatches = empty !== c.negate;
    ids = await persons.distinctIdsByFilters(
      projectId,
      c.filters,
      now,
      emptyMatches === c.negate,
      MAX_PERSON_FILTER_IDS + 1,
    );
  } catch (error) {
    if (error instanceof FilterError) fail(c, error.message);
    throw error;
  }
  if (ids.length > MAX_PERSON_FILTER_IDS) {
    fail(
      c,
      `${c.attr === 'properties' ? 'properties: ' : ''}the person condition selects more than ${MAX_PERSON_FILTER_IDS} distinct ids; narrow it`,
    );
  }
  return { ids, negated: emptyMatches };
}

export type PersonFiltered = Readonly<{
  /** `properties` without its person filters */
  properties: unknown;
  /** `where` parsed, without its person conditions */
  where: WhereItem[] | undefined;
  /** every one must hold */
  personIdSets: PersonIdSet[];
}>;

/** Splits the person conditions out of `properties` and `where` and resolves them in Postgres. */
export async function resolvePersonFilters(
  pool: pg.Pool,
  input: Readonly<{
    projectId: number;
    now: Date;
    properties: unknown;
    where: readonly string[] | undefined;
  }>,
): Promise<PersonFiltered> {
  // the `hogql` filters are parsed here, where every properties input passes before a reader
  await prepareHogQLFilters(input.properties);
  const properties = splitPropertyFilters(input.properties);
  const where = await splitWhere(input.where);
  const persons = personsReader(pool);
  const personIdSets: PersonIdSet[] = [];
  for (const c of [...properties.person, ...where.person])
    personIdSets.push(await resolve(persons, input.projectId, input.now, c));
  return { properties: properties.properties, where: where.where, personIdSets };
}
