import { describe, expect, it } from 'vitest';
import type { FlagProperty } from '../../../../commands/featureFlags/model/flagFilters.ts';
import { parseDate, relativeDate } from '../../../../projections/featureFlags/evaluation/dates.ts';
import {
  type EvaluableFlag,
  evaluateFlags,
  flagValue,
} from '../../../../projections/featureFlags/evaluation/evaluateFlags.ts';
import {
  MAX_REGEX_VALUE_LENGTH,
  matchProperty,
} from '../../../../projections/featureFlags/evaluation/propertyMatch.ts';

const NOW = new Date('2024-03-31T12:00:00Z');
const clock = () => NOW;
const prop = (operator: string, value: unknown): FlagProperty =>
  ({ key: 'k', value, operator, type: 'person' }) as FlagProperty;
const match = (operator: string, value: unknown, actual: unknown, now = clock) =>
  matchProperty(prop(operator, value), { properties: { k: actual }, complete: true }, now);

describe('relative dates read the injected clock', () => {
  const at = (text: string) => relativeDate(text, clock)?.toISOString();

  it('subtracts hours, days, weeks, months and years from now', () => {
    expect(at('-6h')).toBe('2024-03-31T06:00:00.000Z');
    expect(at('1d')).toBe('2024-03-30T12:00:00.000Z');
    expect(at('-7d')).toBe('2024-03-24T12:00:00.000Z');
    expect(at('02w')).toBe('2024-03-17T12:00:00.000Z');
    expect(at('-1y')).toBe('2023-03-31T12:00:00.000Z');
  });

  it('clamps the day at every month step, as posthog-node does', () => {
    expect(at('1m')).toBe('2024-02-29T12:00:00.000Z');
    expect(at('2m')).toBe('2024-01-29T12:00:00.000Z');
    expect(at('13m')).toBe('2023-02-28T12:00:00.000Z');
    const leapDay = () => new Date('2024-02-29T00:00:00Z');
    expect(relativeDate('1y', leapDay)?.toISOString()).toBe('2023-02-28T00:00:00.000Z');
  });

  it('is not relative for 10000 units, an unknown unit or other text', () => {
    for (const text of ['10000d', '5x', '-d', '2024-01-01', '1.5d'])
      expect(at(text)).toBeUndefined();
  });

  it('moves with the clock: the same filter gives other answers on other days', () => {
    const signup = '2024-03-20T00:00:00Z';
    expect(match('is_date_after', '-7d', signup)).toBe(false);
    expect(match('is_date_after', '-7d', signup, () => new Date('2024-03-22T00:00:00Z'))).toBe(
      true,
    );
    expect(match('is_date_before', '-7d', signup)).toBe(true);
  });

  it('reads the clock once per evaluateFlags call, and only when a relative date needs it', () => {
    let reads = 0;
    const counting = () => {
      reads++;
      return NOW;
    };
    const dateFlag = (key: string, value: string): EvaluableFlag => ({
      id: 1,
      key,
      active: true,
      filters: { groups: [{ properties: [{ ...prop('is_date_after', value), key: 'seen' }] }] },
    });
    const context = {
      distinctId: 'd',
      person: { properties: { seen: '2024-03-30' }, complete: true },
    };
    const run = (flags: EvaluableFlag[]) =>
      evaluateFlags(flags, context, { now: counting }).map(flagValue);
    expect(run([dateFlag('a', '2024-01-01')])).toEqual([true]);
    expect(reads).toBe(0);
    expect(run([dateFlag('a', '-7d'), dateFlag('b', '-1d'), dateFlag('c', '-1h')])).toEqual([
      true,
      false,
      false,
    ]);
    expect(reads).toBe(1);
  });
});

describe('dates', () => {
  it('parses ISO-like text as UTC unless it carries a zone, and numbers as milliseconds', () => {
    expect(parseDate('2022-04-05')).toBe(Date.UTC(2022, 3, 5));
    expect(parseDate('2022-04-05 12:34:12')).toBe(Date.UTC(2022, 3, 5, 12, 34, 12));
    expect(parseDate('2022-04-05T12:34:12.5+01:00')).toBe(Date.UTC(2022, 3, 5, 11, 34, 12, 500));
    expect(parseDate('2022-04-05 12:34:12 -0230')).toBe(Date.UTC(2022, 3, 5, 15, 4, 12));
    expect(parseDate('2022-04-30 22:00:00 GMT')).toBe(Date.UTC(2022, 3, 30, 22));
    expect(parseDate('Sat, 30 Apr 2022 22:00:00 GMT')).toBe(Date.UTC(2022, 3, 30, 22));
    expect(parseDate(1651356000000)).toBe(1651356000000);
    for (const bad of ['2022-02-31', 'soon', '', true, null, {}])
      expect(parseDate(bad)).toBeUndefined();
  });

  it('is_date_exact compares instants; an unparsable value or filter does not match', () => {
    expect(match('is_date_exact', '2022-04-05', '2022-04-05T00:00:00Z')).toBe(true);
    expect(match('is_date_exact', '2022-04-05', '2022-04-05T00:00:01Z')).toBe(false);
    expect(match('is_date_before', '2022-04-05', 'not a date')).toBe(false);
    expect(match('is_date_before', '2022-04-05', true)).toBe(false);
    expect(match('is_date_before', 'someday', '2022-01-01')).toBe(false);
    expect(match('is_date_after', true, '2022-01-01')).toBe(false);
  });
});

describe('case folding of icontains, starts_with, ends_with', () => {
  it('folds ASCII letters only, as the flags service does', () => {
    expect(match('icontains', 'ACME.com', 'x@acme.COM')).toBe(true);
    expect(match('starts_with', 'Mr', 'mR Smith')).toBe(true);
    expect(match('ends_with', 'ÄBC', 'xÄbc')).toBe(true);
    expect(match('icontains', 'äbc', 'xÄBC')).toBe(false);
    expect(match('not_icontains', 'äbc', 'xÄBC')).toBe(true);
  });
});

describe('operators where posthog-node 5 defers to the server', () => {
  it('exact compares text, so a number matches its digits', () => {
    expect(match('exact', '1', 1)).toBe(true);
    expect(match('exact', ['1', '2'], 2)).toBe(true);
    expect(match('exact', 'true', true)).toBe(true);
    expect(match('exact', 'True', 'TRUE')).toBe(true);
    expect(match('exact', false, 'false')).toBe(true);
    expect(match('exact', '{"a":1,"b":2}', { b: 2, a: 1 })).toBe(true);
    expect(match('is_not', 'null', null)).toBe(false);
  });

  it('semver: an unparsable property value or filter does not match', () => {
    expect(match('semver_gt', '1.2.3', 'banana')).toBe(false);
    expect(match('semver_gt', '1.2.3', '01.2.3')).toBe(false);
    expect(match('semver_eq', 'nope', '1.2.3')).toBe(false);
    expect(match('semver_neq', 'nope', '1.2.3')).toBe(false);
    expect(match('semver_wildcard', '1.*.*', '1.9.0')).toBe(true);
    expect(match('semver_wildcard', '*', '0.0.1')).toBe(true);
    expect(match('semver_lte', '2.0', '2.0.0-rc.1')).toBe(true);
  });

  it('is_set holds for a present null, is_not_set only for an absent key', () => {
    expect(match('is_set', null, null)).toBe(true);
    expect(match('is_not_set', null, null)).toBe(false);
  });

  it('an unknown operator is refused rather than answered', () => {
    expect(match('between', [1, 2], 1)).toMatchObject({
      unresolved: 'error',
      error: 'invalid_filter',
    });
    expect(match('in', 3, 3)).toMatchObject({ error: 'invalid_filter' });
  });

  it('a filter that can never match is false even while its property is still missing', () => {
    const partial = { properties: {}, complete: false };
    const missing = (operator: string, value: unknown) =>
      matchProperty(prop(operator, value), partial, clock);
    expect(missing('semver_eq', 'x.y')).toBe(false);
    expect(missing('is_date_before', 'someday')).toBe(false);
    expect(missing('semver_eq', '1.0.0')).toMatchObject({ unresolved: 'missing' });
    expect(missing('is_date_before', '-1d')).toMatchObject({ unresolved: 'missing' });
  });

  it('regex: a value past MAX_REGEX_VALUE_LENGTH is no match for both operators, at once', () => {
    const long = 'a'.repeat(MAX_REGEX_VALUE_LENGTH + 1);
    const started = performance.now();
    expect(match('regex', '(a|aa)*', long)).toBe(false);
    expect(match('not_regex', 'b', long)).toBe(false);
    expect(performance.now() - started).toBeLessThan(50);
    expect(match('regex', 'a$', 'a'.repeat(MAX_REGEX_VALUE_LENGTH))).toBe(true);
  });

  it('text operators on a long value: the same answers, the fold done once', () => {
    const long = `${'Ab'.repeat(100_000)}Tail`;
    expect(match('icontains', 'BABTAIL', long)).toBe(true);
    expect(match('not_icontains', 'zz', long)).toBe(true);
    expect(match('starts_with', 'aBa', long)).toBe(true);
    expect(match('ends_with', 'tail', long)).toBe(true);
    const started = performance.now();
    for (let i = 0; i < 5_000; i++) match('icontains', `needle${i % 5}`, long);
    // 5,000 folds of 200 KB took seconds; 5,000 searches of the folded text take far less.
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('regex: an invalid pattern is false for both operators, an unsupported one is refused', () => {
    expect(match('regex', '(', 'x')).toBe(false);
    expect(match('not_regex', '(', 'x')).toBe(false);
    expect(match('regex', '^(?!admin)', 'user')).toMatchObject({ error: 'unsupported_regex' });
    expect(match('regex', '^[a-z]+@posthog\\.com$', 'ben@posthog.com')).toBe(true);
    expect(match('regex', 'POSTHOG', 'posthog')).toBe(false);
    expect(match('regex', '(?i)POSTHOG', 'posthog')).toBe(true);
  });
});
