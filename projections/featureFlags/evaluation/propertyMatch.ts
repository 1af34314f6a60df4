/**
 * One property filter against one subject's properties (flags.md §3.3), with posthog-node 5's
 * semantics where it decides, and the server's answer where posthog-node 5 defers to the server
 * ("inconclusive"): this is the server. In short:
 * - a key the source lacks: missing when the source is partial; when it is complete, `is_not_set`
 *   and the negative operators (`is_not`, `not_icontains`, `not_regex`, `not_starts_with`,
 *   `not_ends_with`) match and the others do not, as in PostHog's flags service;
 * - `is_set` matches a present key even when its value is null; `is_not_set` does not;
 * - null is the text "null" for the text operators and matches nothing else;
 * - a date or version that does not parse, in the filter or in the property, does not match (the
 *   flags service's `unwrap_or(false)`; posthog-node skips such a condition); neither does a
 *   regex that does not compile or runs past the step budget, for `regex` and `not_regex` alike,
 *   nor one against a value longer than `MAX_REGEX_VALUE_LENGTH` (docs/DECISIONS.md "Flag
 *   evaluation");
 * - an unknown operator, or a regex construct the engine does not support, is not evaluable.
 */
import type { FlagProperty } from '../../../commands/featureFlags/model/flagFilters.ts';
import { parseDate, parseDateFilter } from './dates.ts';
import { failure, missingGroup, missingPerson, type Outcome } from './outcome.ts';
import { regexMatches } from './regex/safeRegex.ts';
import {
  caretRange,
  compareSemver,
  inRange,
  parseSemver,
  type Semver,
  type SemverRange,
  tildeRange,
  wildcardRange,
} from './semver.ts';
import type { PropertySource } from './types.ts';

const NEGATIVE = new Set([
  'is_not',
  'not_icontains',
  'not_regex',
  'not_starts_with',
  'not_ends_with',
]);

/** Compact JSON with sorted object keys, as the flags service prints a value that is no string. */
export function jsonText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map((v) => jsonLiteral(v)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const body = keys.map(
      (k) => `${JSON.stringify(k)}:${jsonLiteral((value as Record<string, unknown>)[k])}`,
    );
    return `{${body.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
const jsonLiteral = (v: unknown): string =>
  typeof v === 'string' ? JSON.stringify(v) : jsonText(v);

// "true"/"false" filters (and lists of them) compare truthiness, as PostHog's legacy matching does.
const booleanLike = (v: unknown): boolean =>
  typeof v === 'boolean' ||
  (typeof v === 'string' && /^(true|false)$/i.test(v)) ||
  (Array.isArray(v) && v.every(booleanLike));
const truthy = (v: unknown): boolean =>
  typeof v === 'boolean'
    ? v
    : typeof v === 'string'
      ? v.toLowerCase() === 'true'
      : Array.isArray(v) && v.every(truthy);

function exactMatch(filter: unknown, actual: unknown): boolean {
  if (booleanLike(filter) || (Array.isArray(filter) && filter.length === 0))
    return truthy(filter) === truthy(actual);
  const text = jsonText(actual).toLowerCase();
  const candidates = Array.isArray(filter) ? filter : [filter];
  return candidates.some((c) => jsonText(c).toLowerCase() === text);
}

// The flags service folds only ASCII for substring, prefix and suffix operators. For ASCII text
// toLowerCase is that fold, and far quicker than a replace callback per capital (/decide's hot path).
const NON_ASCII = /[\u0080-\uffff]/;
const fold = (s: string): string =>
  NON_ASCII.test(s) ? s.replace(/[A-Z]/g, (c) => c.toLowerCase()) : s.toLowerCase();
// A long value (say 200 KB) tested by 1,000 flags × 5 `icontains` was folded 5,000 times: folded
// once here instead (a small memo, emptied when full; V8 hashes a string once).
const LONG_TEXT = 1024;
const foldedMemo = new Map<string, string>();
const asciiLower = (v: unknown): string => {
  const s = String(v);
  if (s.length <= LONG_TEXT) return fold(s);
  let folded = foldedMemo.get(s);
  if (folded === undefined) {
    if (foldedMemo.size >= 64) foldedMemo.clear();
    folded = fold(s);
    foldedMemo.set(s, folded);
  }
  return folded;
};

/**
 * Longest value (UTF-16 units) a `regex` filter is run against. The NFA's work is (pattern ×
 * value); PostHog's flags service bounds the same work with a backtrack limit of 10,000 steps and
 * answers no match past it. A longer value is no match for `regex` and `not_regex` alike.
 */
export const MAX_REGEX_VALUE_LENGTH = 10_000;

function compare(operator: string, a: number | string, b: number | string): boolean {
  if (operator === 'gt') return a > b;
  if (operator === 'gte') return a >= b;
  if (operator === 'lt') return a < b;
  return a <= b;
}

const invalidFilter = (property: FlagProperty, why: string) =>
  failure(
    'invalid_filter',
    `filter on "${property.key}" (${String(property.operator ?? 'exact')}): ${why}`,
  );

type SemverFilter = { range: SemverRange } | { target: Semver };
const SEMVER_RANGES: Record<string, (v: unknown) => SemverRange | undefined> = {
  semver_tilde: tildeRange,
  semver_caret: caretRange,
  semver_wildcard: wildcardRange,
};

/** The filter's version or range; undefined when the value is no version (it never matches). */
function semverFilter(property: FlagProperty, operator: string): SemverFilter | undefined {
  const toRange = SEMVER_RANGES[operator];
  if (toRange) {
    const range = toRange(property.value);
    return range && { range };
  }
  const target = parseSemver(property.value);
  return target && { target };
}

function semverOutcome(filter: SemverFilter, operator: string, actual: unknown): boolean {
  const version = actual === undefined || actual === null ? undefined : parseSemver(actual);
  if (!version) return false;
  if ('range' in filter) return inRange(version, filter.range);
  const order = compareSemver(version, filter.target);
  switch (operator) {
    case 'semver_eq':
      return order === 0;
    case 'semver_neq':
      return order !== 0;
    case 'semver_gt':
      return order > 0;
    case 'semver_gte':
      return order >= 0;
    case 'semver_lt':
      return order < 0;
    default:
      return order <= 0;
  }
}

function dateOutcome(
  property: FlagProperty,
  operator: string,
  actual: unknown,
  now: () => Date,
): Outcome {
  const bound = parseDateFilter(property.value, now);
  if (bound === undefined) return false;
  const at = actual === undefined || actual === null ? undefined : parseDate(actual);
  if (at === undefined) return false;
  if (operator === 'is_date_before') return at < bound;
  if (operator === 'is_date_after') return at > bound;
  return at === bound;
}

function regexOutcome(property: FlagProperty, negate: boolean, actual: unknown): Outcome {
  const text = String(actual);
  if (text.length > MAX_REGEX_VALUE_LENGTH) return false;
  const result = regexMatches(String(property.value), text);
  if (typeof result === 'boolean') return result !== negate;
  // PostHog answers false for both operators when the pattern does not compile, or when the
  // match runs past its limit.
  if (result.refused !== 'unsupported') return false;
  return failure('unsupported_regex', `regex ${JSON.stringify(property.value)}: ${result.detail}`);
}

/** What a partial source is missing: the person's properties, or that group type's. */
const missing = (group: string | undefined): Outcome =>
  group === undefined ? missingPerson() : missingGroup(group);

/** A key the source lacks: unknown if partial; else only is_not_set and negative operators match. */
const absent = (source: PropertySource, operator: string, group: string | undefined): Outcome =>
  source.complete ? NEGATIVE.has(operator) || operator === 'is_not_set' : missing(group);

/**
 * Matches a person or group property filter (not cohort, not flag) against `source`, the
 * properties of the person (`group` undefined) or of the named group type.
 */
export function matchProperty(
  property: FlagProperty,
  source: PropertySource,
  now: () => Date,
  group?: string,
): Outcome {
  const operator = property.operator ?? 'exact';
  const present =
    Object.hasOwn(source.properties, property.key) && source.properties[property.key] !== undefined;
  const actual = present ? source.properties[property.key] : undefined;
  if (operator === 'is_set' || operator === 'is_not_set') {
    return present ? operator === 'is_set' : absent(source, operator, group);
  }
  const value = property.value;
  switch (operator) {
    case 'exact':
    case 'is_not':
      if (!present) return absent(source, operator, group);
      return exactMatch(value, actual) === (operator === 'exact');
    case 'icontains':
    case 'not_icontains':
    case 'starts_with':
    case 'not_starts_with':
    case 'ends_with':
    case 'not_ends_with': {
      if (!present) return absent(source, operator, group);
      const text = asciiLower(actual);
      const needle = asciiLower(value);
      const hit = operator.endsWith('icontains')
        ? text.includes(needle)
        : operator.endsWith('starts_with')
          ? text.startsWith(needle)
          : text.endsWith(needle);
      return hit !== operator.startsWith('not_');
    }
    case 'regex':
    case 'not_regex':
      if (!present) return absent(source, operator, group);
      return regexOutcome(property, operator === 'not_regex', actual);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (!present) return absent(source, operator, group);
      if (actual === null) return false;
      const target = typeof value === 'number' ? value : Number.parseFloat(String(value));
      const number = typeof actual === 'number' ? actual : Number.parseFloat(String(actual));
      if (Number.isFinite(target) && Number.isFinite(number))
        return compare(operator, number, target);
      return compare(operator, String(actual), String(value));
    }
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact':
      // A filter that cannot match is false without loading the property.
      if (!present && !source.complete && parseDateFilter(value, now) !== undefined)
        return missing(group);
      return dateOutcome(property, operator, actual, now);
    default:
      if (operator.startsWith('semver_') && isSemverOperator(operator)) {
        // An unusable filter value never matches (the flags service's `unwrap_or(false)`), so it
        // needs no property loaded.
        const filter = semverFilter(property, operator);
        if (!filter) return false;
        if (!present && !source.complete) return missing(group);
        return semverOutcome(filter, operator, actual);
      }
      return invalidFilter(property, 'unknown operator');
  }
}

const SEMVER = new Set([
  'semver_eq',
  'semver_neq',
  'semver_gt',
  'semver_gte',
  'semver_lt',
  'semver_lte',
  'semver_tilde',
  'semver_caret',
  'semver_wildcard',
]);
const isSemverOperator = (op: string) => SEMVER.has(op);
