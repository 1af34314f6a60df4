import { describe, expect, it } from 'vitest';
import {
  type EvaluableFlag,
  evaluateFlags,
} from '../../../../projections/featureFlags/evaluation/evaluateFlags.ts';
import { regexMatches } from '../../../../projections/featureFlags/evaluation/regex/safeRegex.ts';

const result = (pattern: string, text: string) => {
  const r = regexMatches(pattern, text);
  return typeof r === 'boolean' ? r : r.refused;
};

describe("regex syntax (Rust regex crate, as PostHog's flags service)", () => {
  it.each<[string, string, boolean | 'invalid' | 'unsupported']>([
    ['\\.com$', 'value2.com', true],
    ['\\.com$', '.com343tfvalue5', false],
    ['', 'anything', true],
    ['^a|b$', 'xxb', true],
    ['^(ab)+$', 'ababab', true],
    ['^(ab)+$', 'ababa', false],
    ['[a-c]{2,3}x', 'zzbcx', true],
    ['a{2}', 'a', false],
    ['a{2,}?', 'aaa', true],
    ['{3}', 'x{3}', true],
    ['[^a-c]x', 'ax', false],
    ['[]a]', ']', true],
    ['[a-]', '-', true],
    ['[[:alpha:]]+$', 'abc1', false],
    ['[\\x41-\\x43]', 'B', true],
    ['\\x41\\x{42}\\u0043', 'ABC', true],
    ['HELLO', 'hello', false],
    ['(?i)HELLO', 'say hello', true],
    ['(?i:a)B', 'aB', true],
    ['(?i:a)B', 'Ab', false],
    ['a.c', 'a\nc', false],
    ['(?s)a.c', 'a\nc', true],
    ['^b', 'a\nb', false],
    ['(?m)^b$', 'a\nb\nc', true],
    ['\\bfoo\\b', 'a foo b', true],
    ['\\bfoo\\b', 'afoob', false],
    ['\\<foo\\>', 'a foo', true],
    ['\\d', 'x٣', true],
    ['\\p{Greek}+', 'αβγ', true],
    ['\\PL', 'abc', false],
    ['😀.', '😀x', true],
    ['(?P<name>x)y', 'xy', true],
    ['(?<name>x)y', 'xy', true],
    ['(a|)+b', 'b', true],
    // fancy_regex's extra escapes
    ['a\\Kb', 'ab', true],
    ['a\\Z', 'a\n\n', true],
    ['a\\Z', 'a\nb', false],
    ['^\\h+$', 'c0ffee', true],
    ['^\\H', 'c0ffee', false],
    ['a\\Rb', 'a\r\nb', true],
    ['\\Ga', 'ba', false],
    ['\\e', '\u001b', true],
    ['a\\Nb', 'a\nb', false],
    ['a\\Ob', 'a\nb', true],
    ['(a)\\g<1>', 'aa', 'unsupported'],
    ['(', 'x', 'invalid'],
    ['a)', 'x', 'invalid'],
    ['[a', 'a', 'invalid'],
    ['a**', 'a', 'invalid'],
    ['*a', 'a', 'invalid'],
    ['\\q', 'q', 'invalid'],
    ['[z-a]', 'a', 'invalid'],
    ['(?=a)', 'a', 'unsupported'],
    ['(?<!a)b', 'b', 'unsupported'],
    ['(a)\\1', 'aa', 'unsupported'],
    ['(?>a)', 'a', 'unsupported'],
    ['a++', 'a', 'unsupported'],
    ['[a-z&&[^aeiou]]', 'b', 'unsupported'],
  ])('%s on %j → %s', (pattern, text, expected) => {
    expect(result(pattern, text)).toBe(expected);
  });
});

describe('hostile patterns return quickly', () => {
  const timed = <T>(run: () => T): [T, number] => {
    const start = performance.now();
    const value = run();
    return [value, performance.now() - start];
  };

  it.each([
    ['(a+)+$', `${'a'.repeat(20_000)}!`],
    ['(a|a)*$', `${'a'.repeat(20_000)}!`],
    ['(x+x+)+y', 'x'.repeat(20_000)],
    ['^(([a-z])+.)+[A-Z]([a-z])+$', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'],
    ['(.*a){12}', 'a'.repeat(5_000)],
  ])('%s against %d characters', (pattern, text) => {
    const [value, ms] = timed(() => regexMatches(pattern, text));
    expect(typeof value === 'boolean' || value.refused === 'budget').toBe(true);
    expect(ms).toBeLessThan(250);
  });

  it('a catastrophic pattern in a flag is answered, not hung on', () => {
    const flag: EvaluableFlag = {
      id: 1,
      key: 'redos',
      active: true,
      filters: {
        groups: [
          { properties: [{ key: 'email', value: '^(a+)+$', operator: 'regex', type: 'person' }] },
        ],
      },
    };
    const [results, ms] = timed(() =>
      evaluateFlags(
        [flag],
        {
          distinctId: 'd',
          person: { properties: { email: `${'a'.repeat(50_000)}@` }, complete: true },
        },
        { now: () => new Date(0) },
      ),
    );
    expect(results[0]).toMatchObject({ outcome: 'evaluated', enabled: false });
    expect(ms).toBeLessThan(250);
  });

  it('stops a match whose work would be too large at the step budget; a flag reads it as no match', () => {
    const pattern = '(.*a){50}$';
    const text = `${'a'.repeat(100_000)}b`;
    const [value, ms] = timed(() => regexMatches(pattern, text));
    expect(value).toEqual({ refused: 'budget', detail: 'match exceeds the step budget' });
    expect(ms).toBeLessThan(500);
    for (const operator of ['regex', 'not_regex']) {
      const flag: EvaluableFlag = {
        id: 1,
        key: operator,
        active: true,
        filters: {
          groups: [{ properties: [{ key: 'k', value: pattern, operator, type: 'person' }] }],
        },
      } as EvaluableFlag;
      const [result] = evaluateFlags(
        [flag],
        { distinctId: 'd', person: { properties: { k: text }, complete: true } },
        { now: () => new Date(0) },
      );
      expect(result).toMatchObject({ outcome: 'evaluated', enabled: false });
    }
  });
});
