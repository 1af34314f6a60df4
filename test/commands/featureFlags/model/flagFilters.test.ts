import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  deriveFlagFields,
  type FlagFilters,
  normalizeFlagFilters,
  validateFlagFilters,
  validateFlagKey,
} from '../../../../commands/featureFlags/model/flagFilters.ts';

// Verified SDK cases, copied from ../shared/reference/ (see test/fixtures/README.md).
const REFERENCE_DIR = fileURLToPath(new URL('../../../fixtures/', import.meta.url));
type Case = { name: string; flag: { key: string; filters: unknown }; extra_flags?: Case['flag'][] };
const cases = JSON.parse(readFileSync(join(REFERENCE_DIR, 'flag_cases.json'), 'utf8')) as Case[];
const definitions = cases.flatMap((c) =>
  [c.flag, ...(c.extra_flags ?? [])].map((flag, i) => ({
    label: `${c.name}${i ? ` / extra ${i}` : ''}`,
    flag,
  })),
);

const person = (key: string, extra: object = {}) => ({
  key,
  value: 'x',
  operator: 'exact',
  type: 'person',
  ...extra,
});
const one = (props: unknown[], extra: object = {}) => ({
  groups: [{ properties: props, rollout_percentage: 100, ...extra }],
});
const mv = (...pcts: number[]) => ({
  variants: pcts.map((p, i) => ({ key: `v${i}`, rollout_percentage: p })),
});

describe('validateFlagFilters: flag_cases.json definitions', () => {
  it('has definitions to check', () => expect(definitions.length).toBeGreaterThan(300));

  it.each(definitions)('accepts $label', ({ flag }) => {
    const result = validateFlagFilters(flag.filters);
    expect(result).toEqual({ ok: true, filters: flag.filters });
    expect(validateFlagKey(flag.key)).toEqual({ ok: true, key: flag.key });
    // Normalized (stored) filters must themselves be acceptable input for a later PATCH.
    expect(validateFlagFilters(normalizeFlagFilters(flag.filters as FlagFilters)).ok).toBe(true);
  });
});

describe('validateFlagFilters: accepted shapes', () => {
  it.each<[string, unknown, object]>([
    ['empty object as no conditions', {}, { groups: [] }],
    [
      'absent filters as PostHog default condition',
      undefined,
      { groups: [{ properties: [], rollout_percentage: null }] },
    ],
    [
      'group without properties',
      { groups: [{ rollout_percentage: 0 }] },
      { groups: [{ rollout_percentage: 0 }] },
    ],
    [
      'fractional rollout',
      { groups: [{ rollout_percentage: 33.5 }] },
      { groups: [{ rollout_percentage: 33.5 }] },
    ],
    ['is_not_set without value', one([{ key: 'a', type: 'person', operator: 'is_not_set' }]), {}],
    ['cohort with not_in', one([{ key: 'id', value: 3, type: 'cohort', operator: 'not_in' }]), {}],
    [
      'float sum that Python also gets to 100',
      { groups: [], multivariate: mv(33.3, 33.3, 33.4) },
      {},
    ],
    ['multivariate with no variants', { groups: [], multivariate: { variants: [] } }, {}],
    ['empty-string variant override', { groups: [{ variant: '' }] }, {}],
    [
      'JSON-text and raw payloads kept as given',
      { groups: [], payloads: { true: { a: 1 } } },
      { payloads: { true: { a: 1 } } },
    ],
    [
      'variant payload',
      { groups: [], multivariate: mv(100), payloads: { v0: '"hi"' } },
      { payloads: { v0: '"hi"' } },
    ],
    [
      'early_exit and holdout',
      { groups: [], early_exit: true, holdout: { id: 1, exclusion_percentage: 10 } },
      { early_exit: true },
    ],
  ])('%s', (_, input, expected) => {
    const result = validateFlagFilters(input);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.filters).toMatchObject(expected);
  });

  it('preserves unknown keys at every level and does not alias the input', () => {
    const input = {
      groups: [
        {
          properties: [person('email', { label: 'Email' })],
          rollout_percentage: 50,
          sort_key: 'abc',
          description: 'd',
        },
      ],
      multivariate: {
        variants: [{ key: 'a', name: 'A', rollout_percentage: 100, extra: 1 }],
        note: 'x',
      },
      super_groups: [{ properties: [], rollout_percentage: 100 }],
      custom: { nested: true },
    };
    const result = validateFlagFilters(input);
    expect(result).toEqual({ ok: true, filters: input });
    if (result.ok) expect(result.filters).not.toBe(input);
  });

  it('rejects an empty groups list only when asked (PostHog POST rule)', () => {
    expect(validateFlagFilters({}, { requireGroups: true })).toEqual({
      ok: false,
      code: 'invalid_input',
      attr: 'filters',
      detail: 'Feature flags must have at least one condition set (group).',
    });
    expect(validateFlagFilters(one([]), { requireGroups: true }).ok).toBe(true);
  });
});

describe('validateFlagFilters: rejections', () => {
  const PERSON_ONLY =
    'Filters are not valid (person-aggregated conditions can only use person, cohort, and flag properties)';
  const GROUP_ONLY =
    'Filters are not valid (group-aggregated conditions can only use group properties)';
  const GROUP_MISMATCH =
    "Filters are not valid (group properties must match the condition set's group type)";
  const NO_OVERRIDE = 'Filters are not valid (variant override does not exist)';
  const SUM_100 = 'Invalid variant definitions: Variant rollout percentages must sum to 100.';
  const AGG_RANGE = 'aggregation_group_type_index is required to be at least 0 and less than 5';
  const BOOL_KEYS = "Payload keys must be 'true' for boolean flags";
  const VARIANT_KEYS = 'Payload keys must match a variant key for multivariate flags';
  const group = (extra: object) => ({ groups: [{ properties: [], ...extra }] });
  const groupProp = person('a', { type: 'group', group_type_index: 0 });
  const variants = (...list: object[]) => ({ groups: [], multivariate: { variants: list } });
  it.each<[string, unknown, string, string?]>([
    ['null', null, 'This field may not be null.', 'null'],
    ['list', [], 'Expected a dictionary of items but got type "list".', 'not_a_dict'],
    ['string', 'x', 'Expected a dictionary of items but got type "str".', 'not_a_dict'],
    ['groups not a list', { groups: {} }, 'groups must be a list, got dict'],
    ['groups null', { groups: null }, 'groups must be a list, got NoneType'],
    ['group not an object', { groups: ['x'] }, 'groups[0] must be an object, got str'],
    [
      'properties not a list',
      group({ properties: {} }),
      'groups[0].properties must be a list, got dict',
    ],
    ['property not an object', one([1]), 'groups[0].properties[0] must be an object, got int'],
    [
      'property without key',
      one([{ value: 1, type: 'person' }]),
      'groups[0].properties[0].key must be a string, got NoneType',
    ],
    [
      'rollout above 100',
      group({ rollout_percentage: 101 }),
      'groups[0].rollout_percentage must be between 0 and 100, got 101',
    ],
    [
      'rollout below 0',
      group({ rollout_percentage: -1 }),
      'groups[0].rollout_percentage must be between 0 and 100, got -1',
    ],
    [
      'rollout as string',
      group({ rollout_percentage: '50' }),
      'groups[0].rollout_percentage must be a number or null, got str',
    ],
    [
      'rollout as bool',
      group({ rollout_percentage: true }),
      'groups[0].rollout_percentage must be a number or null, got bool',
    ],
    [
      'variant not a string',
      group({ variant: 1 }),
      'groups[0].variant must be a string or null, got int',
    ],
    [
      'unknown variant override',
      { groups: [{ variant: 'nope' }], multivariate: mv(100) },
      NO_OVERRIDE,
    ],
    ['override without multivariate', { groups: [{ variant: 'v0' }] }, NO_OVERRIDE],
    ['missing property type', one([{ key: 'a', value: 1 }]), PERSON_ONLY],
    ['event property', one([person('a', { type: 'event' })]), PERSON_ONLY],
    ['group property on a person flag', one([groupProp]), PERSON_ONLY],
    [
      'person property on a group flag',
      { aggregation_group_type_index: 0, ...one([person('a')]) },
      GROUP_ONLY,
    ],
    [
      'group type mismatch',
      { aggregation_group_type_index: 1, ...one([groupProp]) },
      GROUP_MISMATCH,
    ],
    [
      'explicit null condition aggregation on a group flag',
      {
        aggregation_group_type_index: 0,
        ...one([groupProp], { aggregation_group_type_index: null }),
      },
      PERSON_ONLY,
    ],
    [
      'flag property with another operator',
      one([{ key: '7', value: true, type: 'flag', operator: 'exact' }]),
      "Flag properties must use the 'flag_evaluates_to' operator",
    ],
    [
      'property without value',
      one([{ key: 'a', type: 'person', operator: 'exact' }]),
      'Value must be set for property type person & operator exact',
    ],
    [
      'property without value or operator',
      one([{ key: 'a', type: 'person' }]),
      'Value must be set for property type person & operator None',
    ],
    [
      'unknown operator',
      one([person('a', { operator: 'between' })]),
      'Invalid operator: between',
      'invalid_operator',
    ],
    [
      'in on a person property',
      one([person('a', { operator: 'in' })]),
      "The 'in' operator is only valid for cohort properties, not 'person' properties.",
      'invalid_operator',
    ],
    [
      'property group_type_index 5',
      {
        aggregation_group_type_index: 0,
        ...one([person('a', { type: 'group', group_type_index: 5 })]),
      },
      'group_type_index is required to be at least 0 and less than 5',
    ],
    [
      'property group_type_index string',
      one([person('a', { group_type_index: '0' })]),
      'groups[0].properties[0].group_type_index must be an integer or null, got str',
    ],
    ['aggregation index 5', { groups: [], aggregation_group_type_index: 5 }, AGG_RANGE],
    ['aggregation index -1', { groups: [], aggregation_group_type_index: -1 }, AGG_RANGE],
    [
      'aggregation index fractional',
      { groups: [], aggregation_group_type_index: 1.5 },
      'aggregation_group_type_index must be an integer or null, got float',
    ],
    [
      'aggregation index string',
      { groups: [], aggregation_group_type_index: '0' },
      'aggregation_group_type_index must be an integer or null, got str',
    ],
    [
      'condition aggregation string',
      group({ aggregation_group_type_index: 'x' }),
      'groups[0].aggregation_group_type_index must be an integer or null, got str',
    ],
    [
      'early_exit string',
      { groups: [], early_exit: 'yes' },
      'early_exit must be a boolean or null, got str',
    ],
    [
      'multivariate not an object',
      { groups: [], multivariate: [] },
      'multivariate must be an object or null, got list',
    ],
    [
      'variants not a list',
      { groups: [], multivariate: { variants: 'a' } },
      'multivariate.variants must be a list, got str',
    ],
    [
      'variant not an object',
      { groups: [], multivariate: { variants: [1] } },
      'multivariate.variants[0] must be an object, got int',
    ],
    [
      'variant key missing',
      variants({ rollout_percentage: 100 }),
      'multivariate.variants[0].key must be a string, got NoneType',
    ],
    [
      'variant key empty',
      variants({ key: '', rollout_percentage: 100 }),
      'multivariate.variants[0].key must not be empty',
    ],
    [
      'duplicate variant keys',
      variants({ key: 'a', rollout_percentage: 50 }, { key: 'a', rollout_percentage: 50 }),
      'Invalid variant definitions: Variant keys must be unique.',
    ],
    [
      'variant rollout missing',
      variants({ key: 'a' }),
      'multivariate.variants[0].rollout_percentage must be a number, got null',
    ],
    [
      'variant rollout string',
      variants({ key: 'a', rollout_percentage: '100' }),
      'multivariate.variants[0].rollout_percentage must be a number, got str',
    ],
    [
      'variant rollout above 100',
      { groups: [], multivariate: mv(150, -50) },
      'multivariate.variants[0].rollout_percentage must be between 0 and 100, got 150',
    ],
    ['variant sum below 100', { groups: [], multivariate: mv(50, 40) }, SUM_100],
    ['variant sum above 100', { groups: [], multivariate: mv(50, 60) }, SUM_100],
    ['payloads null', { groups: [], payloads: null }, 'Payloads must be passed as a dictionary'],
    ['payloads list', { groups: [], payloads: ['a'] }, 'Payloads must be passed as a dictionary'],
    [
      'payload text that is not JSON',
      { groups: [], payloads: { true: 'hello' } },
      'Payload value is not valid JSON',
    ],
    ['boolean payload key', { groups: [], payloads: { yes: '1' } }, BOOL_KEYS],
    [
      'boolean payload with extra key',
      { groups: [], payloads: { true: '1', false: '0' } },
      BOOL_KEYS,
    ],
    [
      'empty multivariate counts as boolean',
      { groups: [], multivariate: {}, payloads: { v0: '1' } },
      BOOL_KEYS,
    ],
    [
      'multivariate payload key',
      { groups: [], multivariate: mv(100), payloads: { true: '1' } },
      VARIANT_KEYS,
    ],
    [
      'payload on multivariate without variants',
      { groups: [], multivariate: { variants: [] }, payloads: { true: '1' } },
      VARIANT_KEYS,
    ],
  ])('%s', (_, input, detail, code = 'invalid_input') => {
    expect(validateFlagFilters(input)).toEqual({ ok: false, code, detail, attr: 'filters' });
  });
});

describe('normalizeFlagFilters', () => {
  it('defaults groups and distributes the flag aggregation to conditions', () => {
    expect(
      normalizeFlagFilters({
        groups: [{ rollout_percentage: 5 }],
        aggregation_group_type_index: 2,
      } as FlagFilters),
    ).toEqual({
      groups: [{ rollout_percentage: 5, aggregation_group_type_index: 2 }],
      aggregation_group_type_index: 2,
    });
    expect(normalizeFlagFilters({} as FlagFilters)).toEqual({ groups: [] });
  });

  it('sets the flag-level aggregation to null when conditions differ', () => {
    const mixed = {
      groups: [{ aggregation_group_type_index: 0 }, { rollout_percentage: 1 }],
    } as FlagFilters;
    expect(normalizeFlagFilters(mixed)).toEqual({
      groups: [
        { aggregation_group_type_index: 0 },
        { rollout_percentage: 1, aggregation_group_type_index: null },
      ],
      aggregation_group_type_index: null,
    });
  });

  it('stores non-string payloads as Python-style JSON text and leaves strings alone', () => {
    const filters = { groups: [], payloads: { true: { a: [1, 'é'], b: null } } } as FlagFilters;
    expect(normalizeFlagFilters(filters).payloads).toEqual({
      true: '{"a": [1, "\\u00e9"], "b": null}',
    });
    expect(normalizeFlagFilters({ groups: [], payloads: { true: '{"a":1}' } }).payloads).toEqual({
      true: '{"a":1}',
    });
    expect(filters.payloads).toEqual({ true: { a: [1, 'é'], b: null } });
  });

  it('reads absent filters back as one empty condition', () => {
    expect(normalizeFlagFilters(undefined)).toEqual({
      groups: [{ properties: [], rollout_percentage: null }],
    });
  });
});

describe('deriveFlagFields', () => {
  const f = (x: object) => x as FlagFilters;
  it.each<[string, FlagFilters | undefined, boolean, number | null]>([
    [
      'single rollout condition',
      f({ groups: [{ properties: [], rollout_percentage: 65 }] }),
      true,
      65,
    ],
    ['single condition without rollout', f({ groups: [{}] }), true, null],
    ['absent filters (PostHog default condition)', undefined, true, null],
    // Issue #2 asks for the older rule: a multivariate flag is never simple.
    [
      'multivariate with one empty condition',
      f({ groups: [{ rollout_percentage: 40 }], multivariate: mv(100) }),
      false,
      null,
    ],
    ['condition with properties', f(one([person('email')])), false, null],
    [
      'two conditions',
      f({ groups: [{ rollout_percentage: 1 }, { rollout_percentage: 2 }] }),
      false,
      null,
    ],
    ['no conditions', f({ groups: [] }), false, null],
    [
      'group flag',
      f({ groups: [{ rollout_percentage: 65 }], aggregation_group_type_index: 0 }),
      false,
      null,
    ],
    [
      'condition-level group aggregation',
      f({ groups: [{ rollout_percentage: 65, aggregation_group_type_index: 1 }] }),
      false,
      null,
    ],
  ])('%s', (_, filters, isSimple, rollout) => {
    expect(deriveFlagFields(filters)).toEqual({
      is_simple_flag: isSimple,
      rollout_percentage: rollout,
    });
  });
});

describe('validateFlagKey', () => {
  it.each<[unknown, string]>([
    ['beta-feature', 'beta-feature'],
    ['Snake_Case_09', 'Snake_Case_09'],
    ['  padded  ', 'padded'],
    [123, '123'],
    ['a'.repeat(400), 'a'.repeat(400)],
  ])('accepts %j', (input, key) => expect(validateFlagKey(input)).toEqual({ ok: true, key }));

  const invalidKey = 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.';
  it.each<[unknown, string, string]>([
    [undefined, 'required', 'This field is required.'],
    [null, 'null', 'This field may not be null.'],
    ['', 'blank', 'This field may not be blank.'],
    ['   ', 'blank', 'This field may not be blank.'],
    [true, 'invalid_input', 'Not a valid string.'],
    [['a'], 'invalid_input', 'Not a valid string.'],
    ['a'.repeat(401), 'max_length', 'Ensure this field has no more than 400 characters.'],
    ...['foo?bar=baz', 'foo/bar', 'foo\\bar', 'foo.bar', 'foo bar', 'ünïcode', 1.5].map(
      (k): [unknown, string, string] => [k, 'invalid_key', invalidKey],
    ),
  ])('rejects %j', (input, code, detail) => {
    expect(validateFlagKey(input)).toEqual({ ok: false, code, detail, attr: 'key' });
  });
});
