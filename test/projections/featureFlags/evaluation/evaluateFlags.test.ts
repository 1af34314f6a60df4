import { describe, expect, it } from 'vitest';
import type {
  FlagCondition,
  FlagFilters,
  FlagProperty,
} from '../../../../commands/featureFlags/model/flagFilters.ts';
import {
  type EvaluableFlag,
  type EvaluationContext,
  evaluateFlag,
  evaluateFlags,
  flagValue,
} from '../../../../projections/featureFlags/evaluation/evaluateFlags.ts';
import { flagHash, holdoutHash } from '../../../../projections/featureFlags/evaluation/hashing.ts';

const noClock = () => {
  throw new Error('the clock was read');
};
let nextId = 1;
const flag = (key: string, filters: Partial<FlagFilters>, extra: Partial<EvaluableFlag> = {}) =>
  ({
    id: nextId++,
    key,
    active: true,
    filters: { groups: [], ...filters },
    ...extra,
  }) as EvaluableFlag;
const rollout = (pct: number | null, extra: Partial<FlagCondition> = {}): FlagCondition => ({
  properties: [],
  rollout_percentage: pct,
  ...extra,
});
const person = (key: string, value: unknown, operator = 'exact'): FlagProperty =>
  ({ key, value, operator, type: 'person' }) as FlagProperty;
const dependsOn = (key: string, value: unknown): FlagProperty => ({
  key,
  value,
  operator: 'flag_evaluates_to',
  type: 'flag',
  dependency_chain: [key],
});
const ctx = (extra: Partial<EvaluationContext> = {}): EvaluationContext => ({
  distinctId: 'user-1',
  person: { properties: {}, complete: true },
  hashKeyOverrides: {},
  ...extra,
});
const evalAll = (flags: EvaluableFlag[], context = ctx()) =>
  Object.fromEntries(evaluateFlags(flags, context, { now: noClock }).map((r) => [r.key, r]));
const one = (f: EvaluableFlag, context = ctx(), others: EvaluableFlag[] = []) =>
  evaluateFlag(f, context, { now: noClock, others });

describe('results and reasons', () => {
  it('answers a matched condition with its index, variant and payload', () => {
    const f = flag('mv', {
      groups: [rollout(0), rollout(100, { variant: 'b' })],
      multivariate: {
        variants: [
          { key: 'a', rollout_percentage: 50 },
          { key: 'b', rollout_percentage: 50 },
        ],
      },
      payloads: { b: '{"x": 1}' },
    });
    expect(one(f)).toEqual({
      outcome: 'evaluated',
      key: 'mv',
      enabled: true,
      variant: 'b',
      reason: {
        code: 'condition_match',
        condition_index: 1,
        description: 'Matched condition set 2',
      },
      payload: '{"x": 1}',
    });
  });

  it('gives the boolean payload under "true" and none when false', () => {
    const on = flag('on', { groups: [rollout(null)], payloads: { true: '"yes"' } });
    const off = flag('off', { groups: [rollout(0)], payloads: { true: '"yes"' } });
    expect(one(on)).toMatchObject({ enabled: true, variant: null, payload: '"yes"' });
    expect(one(off)).toMatchObject({ enabled: false, payload: null });
  });

  it('reports flag_disabled for an inactive or deleted flag, before anything else', () => {
    const inactive = flag(
      'x',
      { groups: [rollout(100)] },
      { active: false, ensure_experience_continuity: true },
    );
    expect(one(inactive, ctx({ hashKeyOverrides: undefined }))).toMatchObject({
      enabled: false,
      reason: {
        code: 'flag_disabled',
        condition_index: null,
        description: 'Feature flag is disabled',
      },
    });
    expect(one(flag('y', { groups: [rollout(100)] }, { deleted: true }))).toMatchObject({
      enabled: false,
      reason: { code: 'flag_disabled' },
    });
  });

  it('reports the strongest non-matching reason, the later condition on a tie', () => {
    const f = flag('r', {
      groups: [
        { properties: [person('plan', 'pro')], rollout_percentage: 100 },
        rollout(0),
        { properties: [person('plan', 'team')], rollout_percentage: 100 },
      ],
    });
    expect(one(f)).toMatchObject({
      enabled: false,
      reason: {
        code: 'out_of_rollout_bound',
        condition_index: 1,
        description: 'Out of rollout bound',
      },
    });
    const g = flag('n', {
      groups: [{ properties: [person('a', 1)] }, { properties: [person('b', 1)] }],
    });
    expect(one(g)).toMatchObject({ reason: { code: 'no_condition_match', condition_index: 1 } });
    expect(one(flag('empty', { groups: [] }))).toMatchObject({
      enabled: false,
      reason: { code: 'no_condition_match', condition_index: null },
    });
  });

  it('stops at early_exit when the filters matched but the rollout excluded', () => {
    const filters = { groups: [rollout(0), rollout(100)] };
    expect(flagValue(one(flag('ee', { ...filters, early_exit: false })))).toBe(true);
    expect(one(flag('ee', { ...filters, early_exit: true }))).toMatchObject({
      enabled: false,
      reason: { code: 'out_of_rollout_bound', condition_index: 0 },
    });
  });

  it('evaluates only the requested keys, with their dependencies', () => {
    const base = flag('base', { groups: [rollout(100)] });
    const dep = flag('dep', { groups: [{ properties: [dependsOn('base', true)] }] });
    const results = evaluateFlags([base, dep, flag('other', {})], ctx(), {
      now: noClock,
      keys: ['dep'],
    });
    expect(results.map((r) => [r.key, flagValue(r)])).toEqual([['dep', true]]);
  });
});

describe('partial properties: inconclusive, and what to load', () => {
  const f = flag('p', {
    groups: [{ properties: [person('email', 'x@y.z')], rollout_percentage: 100 }, rollout(100)],
  });

  it('names the person properties when a needed key was not supplied', () => {
    expect(one(f, ctx({ person: { properties: {}, complete: false } }))).toEqual({
      outcome: 'inconclusive',
      key: 'p',
      needs: { person: true, groups: [], hashKeyOverrides: false },
      description: 'needs person properties',
    });
  });

  it('decides with the supplied value, and with complete properties', () => {
    const supplied = { properties: { email: 'x@y.z' }, complete: false };
    expect(one(f, ctx({ person: supplied }))).toMatchObject({ reason: { condition_index: 0 } });
    expect(one(f, ctx())).toMatchObject({ enabled: true, reason: { condition_index: 1 } });
  });

  it('is not inconclusive when a supplied property already rules the condition out', () => {
    const g = flag('q', {
      groups: [{ properties: [person('plan', 'pro'), person('email', 'x@y.z')] }],
    });
    const partial = ctx({ person: { properties: { plan: 'free' }, complete: false } });
    expect(one(g, partial)).toMatchObject({ outcome: 'evaluated', enabled: false });
  });

  it('follows the server for a missing key with complete properties (flags.md decision 2)', () => {
    const byOperator = (operator: string, value: unknown = 'v') =>
      flagValue(one(flag(operator, { groups: [{ properties: [person('k', value, operator)] }] })));
    expect(byOperator('exact')).toBe(false);
    expect(byOperator('is_set')).toBe(false);
    expect(byOperator('is_not_set')).toBe(true);
    expect(byOperator('icontains')).toBe(false);
    expect(byOperator('gt', 1)).toBe(false);
    for (const negative of [
      'is_not',
      'not_icontains',
      'not_regex',
      'not_starts_with',
      'not_ends_with',
    ])
      expect(byOperator(negative)).toBe(true);
    const partial = ctx({ person: { properties: { k: 1 }, complete: false } });
    const isNotSet = flag('ins', { groups: [{ properties: [person('k', null, 'is_not_set')] }] });
    expect(flagValue(one(isNotSet, partial))).toBe(false);
  });
});

describe('group flags', () => {
  const mapping = { '0': 'company', '1': 'project' };
  const groupFlag = flag('group-flag', {
    aggregation_group_type_index: 0,
    groups: [
      {
        properties: [
          { key: 'name', value: ['Acme'], operator: 'exact', type: 'group', group_type_index: 0 },
        ],
        rollout_percentage: 35,
      },
    ],
  });
  const company = (key: string, complete = true) => ({
    groupTypeMapping: mapping,
    groups: { company: { key, properties: { name: 'Acme' }, complete } },
  });

  it('hashes the group key, not the distinct id (flags.md §2 worked example)', () => {
    expect(flagHash('group-flag', 'amazon')).toBeCloseTo(0.5432523073764106, 15);
    expect(flagValue(one(groupFlag, ctx(company('amazon'))))).toBe(false);
    expect(flagValue(one(groupFlag, ctx(company('amazon_without_rollout'))))).toBe(true);
  });

  it('is false with no_group_type when the group was not passed or the index is unmapped', () => {
    const expected = { enabled: false, reason: { code: 'no_group_type', condition_index: null } };
    expect(one(groupFlag, ctx({ groupTypeMapping: mapping }))).toMatchObject(expected);
    expect(one(groupFlag, ctx({ ...company('amazon'), groupTypeMapping: {} }))).toMatchObject(
      expected,
    );
  });

  it('asks for that group type when its properties were not all supplied', () => {
    const partial = ctx({
      groupTypeMapping: mapping,
      groups: { company: { key: 'amazon_without_rollout', properties: {}, complete: false } },
    });
    expect(one(groupFlag, partial)).toMatchObject({
      outcome: 'inconclusive',
      needs: { person: false, groups: ['company'], hashKeyOverrides: false },
    });
  });

  it('aggregates each condition by its own index (mixed targeting)', () => {
    const mixed = flag('mixed', {
      aggregation_group_type_index: null,
      groups: [
        { aggregation_group_type_index: 1, properties: [], rollout_percentage: 100, variant: 'p' },
        { aggregation_group_type_index: null, properties: [person('email', 'a@b.c')] },
      ],
      multivariate: {
        variants: [
          { key: 'p', rollout_percentage: 50 },
          { key: 'q', rollout_percentage: 50 },
        ],
      },
    });
    const project = { project: { key: 'p1', properties: {}, complete: true } };
    expect(flagValue(one(mixed, ctx({ groupTypeMapping: mapping, groups: project })))).toBe('p');
    const personOnly = ctx({
      groupTypeMapping: mapping,
      person: { properties: { email: 'a@b.c' }, complete: true },
    });
    expect(one(mixed, personOnly)).toMatchObject({
      enabled: true,
      reason: { condition_index: 1 },
    });
    expect(one(mixed, ctx({ groupTypeMapping: mapping }))).toMatchObject({
      enabled: false,
      reason: {
        code: 'no_condition_match',
        description:
          'No matching condition set (group conditions were not evaluated because no group type was provided)',
      },
    });
  });

  it("picks a group condition's variant by the group key", () => {
    const variants = [
      { key: 'a', rollout_percentage: 50 },
      { key: 'b', rollout_percentage: 50 },
    ];
    const f = flag('gv', {
      aggregation_group_type_index: 0,
      groups: [rollout(100)],
      multivariate: { variants },
    });
    const byGroup = (key: string) =>
      flagValue(one(f, ctx({ ...company(key), distinctId: 'same' })));
    const expected = (key: string) => (flagHash('gv', key, 'variant') < 0.5 ? 'a' : 'b');
    for (const key of ['g1', 'g2', 'g3', 'g4', 'g5']) expect(byGroup(key)).toBe(expected(key));
  });
});

describe('flag dependencies', () => {
  it('matches flag_evaluates_to true, false and a variant', () => {
    const on = flag('on', { groups: [rollout(100)] });
    const off = flag('off', { groups: [rollout(0)] });
    const mv = flag('mv', {
      groups: [rollout(100, { variant: 'blue' })],
      multivariate: { variants: [{ key: 'blue', rollout_percentage: 100 }] },
    });
    const deps = (value: unknown, target: string) =>
      flag(`d-${target}-${String(value)}`, {
        groups: [{ properties: [dependsOn(target, value)] }],
      });
    const flags = [on, off, mv];
    const value = (d: EvaluableFlag) => flagValue(one(d, ctx(), flags));
    expect([value(deps(true, 'on')), value(deps(false, 'on')), value(deps(false, 'off'))]).toEqual([
      true,
      false,
      true,
    ]);
    expect([value(deps(true, 'mv')), value(deps('blue', 'mv')), value(deps('red', 'mv'))]).toEqual([
      true,
      true,
      false,
    ]);
    expect(value(deps(false, 'mv'))).toBe(false);
  });

  it('names a dependency by id as well as by key; an inactive one is false', () => {
    const base = flag('base', { groups: [rollout(100)] }, { id: 4242 });
    const dependent = flag('dependent', { groups: [{ properties: [dependsOn('4242', true)] }] });
    expect(flagValue(one(dependent, ctx(), [base]))).toBe(true);
    expect(flagValue(one(dependent, ctx(), [{ ...base, active: false }]))).toBe(false);
  });

  it('passes on what a dependency needs, and its errors', () => {
    const base = flag('base', { groups: [{ properties: [person('email', 'a@b.c')] }] });
    const dependent = flag('dependent', { groups: [{ properties: [dependsOn('base', true)] }] });
    const partial = ctx({ person: { properties: {}, complete: false } });
    expect(one(dependent, partial, [base])).toMatchObject({
      outcome: 'inconclusive',
      needs: { person: true },
    });
    const cohortBase = flag('base', {
      groups: [{ properties: [{ key: 'id', value: 7, type: 'cohort' }] }],
    });
    expect(one(dependent, ctx(), [cohortBase])).toMatchObject({
      outcome: 'not_evaluable',
      error: 'cohort_unavailable',
    });
    expect(one(dependent, ctx(), [])).toMatchObject({
      outcome: 'not_evaluable',
      error: 'missing_dependency',
    });
  });

  it('refuses every flag on or behind a cycle, whatever else its conditions say', () => {
    const a = flag('a', {
      groups: [{ properties: [dependsOn('b', true), person('plan', 'pro')] }],
    });
    const b = flag('b', { groups: [{ properties: [dependsOn('a', true)] }] });
    const behind = flag('behind', {
      groups: [{ properties: [dependsOn('a', true)] }, rollout(100)],
    });
    const self = flag('self', { groups: [{ properties: [dependsOn('self', false)] }] });
    const fine = flag('fine', { groups: [rollout(100)] });
    const results = evalAll([behind, a, b, self, fine]);
    for (const key of ['a', 'b', 'behind', 'self'])
      expect(results[key]).toMatchObject({ outcome: 'not_evaluable', error: 'dependency_cycle' });
    expect(flagValue(results.fine!)).toBe(true);
  });
});

describe('experience continuity, holdouts, early access', () => {
  const rolled = flag('cont', { groups: [rollout(50)] }, { ensure_experience_continuity: true });

  it('hashes the stored hash key instead of the distinct id', () => {
    const ids = Array.from({ length: 40 }, (_, i) => `anon-${i}`);
    for (const anon of ids) {
      const withOverride = one(
        rolled,
        ctx({ distinctId: 'identified', hashKeyOverrides: { cont: anon } }),
      );
      expect(flagValue(withOverride)).toBe(flagValue(one(rolled, ctx({ distinctId: anon }))));
    }
    expect(flagValue(one(rolled, ctx({ hashKeyOverrides: {} })))).toBe(
      flagHash('cont', 'user-1') <= 0.5,
    );
  });

  it('is inconclusive until the overrides are loaded', () => {
    expect(one(rolled, ctx({ hashKeyOverrides: undefined }))).toMatchObject({
      outcome: 'inconclusive',
      needs: { hashKeyOverrides: true, person: false },
    });
    const plain = flag('plain', { groups: [rollout(50)] });
    expect(one(plain, ctx({ hashKeyOverrides: undefined })).outcome).toBe('evaluated');
  });

  it('holds out by sha1("holdout-" + id), before the conditions', () => {
    const f = flag('exp', {
      groups: [rollout(100)],
      holdout: { id: 9, exclusion_percentage: 30 },
      payloads: { 'holdout-9': '"h"' },
    });
    let held = 0;
    for (let i = 0; i < 200; i++) {
      const result = one(f, ctx({ distinctId: `u${i}` }));
      const inHoldout = holdoutHash(`u${i}`) <= 0.3;
      held += inHoldout ? 1 : 0;
      expect(result).toMatchObject(
        inHoldout
          ? {
              variant: 'holdout-9',
              reason: { code: 'holdout_condition_value', condition_index: null },
              payload: '"h"',
            }
          : { variant: null, enabled: true, reason: { code: 'condition_match' } },
      );
    }
    expect(held).toBeGreaterThan(30);
    expect(held).toBeLessThan(90);
  });

  it('lets an early-access enrolment decide (super_groups and feature_enrollment)', () => {
    const enrol = flag('beta', { feature_enrollment: true, groups: [rollout(0)] });
    const props = (properties: Record<string, unknown>, complete = true) =>
      ctx({ person: { properties, complete } });
    expect(one(enrol, props({ '$feature_enrollment/beta': true }))).toMatchObject({
      enabled: true,
      reason: { code: 'super_condition_value', condition_index: 0 },
    });
    expect(flagValue(one(enrol, props({ '$feature_enrollment/beta': 'false' })))).toBe(false);
    expect(one(enrol, props({}))).toMatchObject({ reason: { code: 'out_of_rollout_bound' } });
    expect(one(enrol, props({}, false)).outcome).toBe('inconclusive');
    const legacy = flag('legacy', {
      super_groups: [
        { properties: [person('$feature_enrollment/legacy', ['true'])], rollout_percentage: 100 },
      ],
      groups: [rollout(100)],
    });
    expect(flagValue(one(legacy, props({ '$feature_enrollment/legacy': false })))).toBe(false);
    expect(one(legacy, props({}))).toMatchObject({
      enabled: true,
      reason: { code: 'condition_match' },
    });
  });
});

describe('cohorts', () => {
  const inCohort = flag('c', {
    groups: [{ properties: [{ key: 'id', value: 5, type: 'cohort' }] }],
  });

  it('is not evaluable when the cohort is not available, never silently false', () => {
    expect(one(inCohort)).toMatchObject({ outcome: 'not_evaluable', error: 'cohort_unavailable' });
  });

  it('evaluates a supplied definition (AND/OR, negation, not_in)', () => {
    const cohorts = {
      '5': {
        type: 'OR',
        values: [
          { type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person', negation: true }] },
          { type: 'AND', values: [{ key: 'id', value: 6, type: 'cohort' }] },
        ],
      },
      '6': {
        type: 'AND',
        values: [{ key: 'country', value: ['FR'], operator: 'exact', type: 'person' }],
      },
    };
    const value = (properties: Record<string, unknown>, f = inCohort) =>
      flagValue(one(f, ctx({ cohorts, person: { properties, complete: true } })));
    expect(value({ plan: 'free' })).toBe(true);
    expect(value({ plan: 'pro', country: 'FR' })).toBe(true);
    expect(value({ plan: 'pro', country: 'DE' })).toBe(false);
    const notIn = flag('n', {
      groups: [{ properties: [{ key: 'id', value: 5, type: 'cohort', operator: 'not_in' }] }],
    });
    expect(value({ plan: 'pro', country: 'DE' }, notIn)).toBe(true);
  });
});

describe('the request deadline', () => {
  it('flags not decided by the deadline are deadline_exceeded; none without one', () => {
    const flags = [flag('a', { groups: [rollout(100)] }), flag('b', { groups: [rollout(100)] })];
    const context: EvaluationContext = {
      distinctId: 'd',
      person: { properties: {}, complete: true },
    };
    const past = evaluateFlags(flags, context, { now: noClock, deadlineMs: Date.now() - 1 });
    expect(past.map((e) => e.outcome === 'not_evaluable' && e.error)).toEqual([
      'deadline_exceeded',
      'deadline_exceeded',
    ]);
    const future = evaluateFlags(flags, context, { now: noClock, deadlineMs: Date.now() + 60_000 });
    expect(future.map(flagValue)).toEqual([true, true]);
  });

  it('200 slow regex conditions stop at the deadline, not after the last one', () => {
    const conditions = Array.from({ length: 200 }, (_, i) =>
      rollout(100, { properties: [person('email', `(a|aa)*b${i}`, 'regex')] }),
    );
    const context: EvaluationContext = {
      distinctId: 'd',
      person: { properties: { email: 'a'.repeat(10_000) }, complete: true },
    };
    const started = Date.now();
    const [heavy] = evaluateFlags([flag('heavy', { groups: conditions })], context, {
      now: noClock,
      deadlineMs: started + 200,
    });
    expect(heavy).toMatchObject({ outcome: 'not_evaluable', error: 'deadline_exceeded' });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
