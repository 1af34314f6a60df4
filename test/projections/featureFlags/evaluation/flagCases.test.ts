import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  type EvaluableFlag,
  type EvaluationContext,
  evaluateFlags,
  flagValue,
} from '../../../../projections/featureFlags/evaluation/evaluateFlags.ts';

// Verified cases, copied from ../shared/reference/ (see test/fixtures/README.md).
const FIXTURES = fileURLToPath(new URL('../../../fixtures/', import.meta.url));
const read = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));

type Value = string | boolean;
type Case = {
  name: string;
  flag: EvaluableFlag;
  extra_flags?: EvaluableFlag[];
  distinct_id: string;
  person_properties?: Record<string, unknown>;
  groups?: Record<string, string>;
  group_properties?: Record<string, Record<string, unknown>>;
  group_type_mapping?: Record<string, string>;
  cohorts?: EvaluationContext['cohorts'];
  now?: string;
  expected_here?: Value;
};

const allCases = read('flag_cases.json') as Case[];
// Every case of the file carries this project's answer; a case without one would only be a
// definition for flagFilters.test.ts.
const cases = allCases
  .filter((c) => c.expected_here !== undefined)
  .map((c, i) => ({ ...c, label: `#${i} ${c.name}` }));

/** A clock that fails the test if a case without `now` reads it. */
const clockOf = (c: Case) => () => {
  if (!c.now) throw new Error(`case "${c.name}" read the clock but has no "now"`);
  return new Date(c.now);
};

function contextOf(c: Case, complete: boolean): EvaluationContext {
  const groups = Object.fromEntries(
    Object.entries(c.groups ?? {}).map(([name, key]) => [
      name,
      { key, properties: c.group_properties?.[name] ?? {}, complete },
    ]),
  );
  return {
    distinctId: c.distinct_id,
    person: { properties: c.person_properties ?? {}, complete },
    groups,
    groupTypeMapping: c.group_type_mapping ?? {},
    hashKeyOverrides: {},
    cohorts: c.cohorts,
  };
}

const evaluate = (c: Case, complete: boolean) => {
  const [result] = evaluateFlags([c.flag, ...(c.extra_flags ?? [])], contextOf(c, complete), {
    now: clockOf(c),
    keys: [c.flag.key],
  });
  return result!;
};

describe('flag_cases.json: every evaluation case gives expected_here', () => {
  it('reads the evaluation cases', () => {
    expect(allCases).toHaveLength(354);
    expect(cases).toHaveLength(354);
  });

  it.each(cases)('$label', (c) => {
    // The case's properties are all the subject has (server evaluation, flags.md decision 2).
    const result = evaluate(c, true);
    expect(result.outcome, JSON.stringify(result)).toBe('evaluated');
    expect(flagValue(result)).toEqual(c.expected_here);
  });

  it('with the same properties as a partial request, each case is either decided the same way or inconclusive', () => {
    const wrong: string[] = [];
    let inconclusive = 0;
    for (const c of cases) {
      const result = evaluate(c, false);
      if (result.outcome === 'inconclusive') inconclusive++;
      else if (flagValue(result) !== c.expected_here)
        wrong.push(`${c.label}: ${JSON.stringify(result)}`);
    }
    expect(wrong).toEqual([]);
    expect(inconclusive).toBeGreaterThan(0);
  });
});

type ConsistencyCase = {
  flag: EvaluableFlag;
  distinct_id_pattern: string;
  expected: Value[];
};
const consistency = read('flag_consistency_full.json') as { cases: ConsistencyCase[] };

describe('flag_consistency_full.json: 1,000 ids per flag', () => {
  it('has the two lists', () => {
    expect(consistency.cases.map((c) => [c.flag.key, c.expected.length])).toEqual([
      ['simple-flag', 1000],
      ['multivariate-flag', 1000],
    ]);
  });

  it.each(consistency.cases)('$flag.key', (c) => {
    const mismatches: string[] = [];
    c.expected.forEach((expected, i) => {
      const distinctId = c.distinct_id_pattern.replace('{i}', String(i));
      const [result] = evaluateFlags(
        [c.flag],
        { distinctId, person: { properties: {}, complete: false } },
        { now: () => new Date(0) },
      );
      const value = flagValue(result!);
      if (value !== expected)
        mismatches.push(`${distinctId}: ${String(value)} ≠ ${String(expected)}`);
    });
    expect(mismatches).toEqual([]);
  });
});
