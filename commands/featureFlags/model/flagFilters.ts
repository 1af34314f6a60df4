/**
 * PostHog feature-flag `filters` and `key`: validation, normalisation and derived fields. Pure.
 *
 * Rules and wording follow PostHog's FeatureFlagSerializer (`validate_filters`, `validate_key`,
 * newest `products/feature_flags/backend/api/feature_flag.py`). DRF reports an error raised
 * inside `validate_filters` on attr "filters" and maps DRF's default code "invalid" to
 * "invalid_input", so that is what every filters error carries here. Checks that need the
 * database (cohort existence, flag-dependency cycles, key uniqueness) belong to the caller.
 */

/** Operators our evaluator supports (flags.md §3.3); PostHog rejects others as "Invalid operator". */
export const FLAG_PROPERTY_OPERATORS = [
  'exact',
  'is_not',
  'is_set',
  'is_not_set',
  'icontains',
  'not_icontains',
  'regex',
  'not_regex',
  'gt',
  'gte',
  'lt',
  'lte',
  'is_date_before',
  'is_date_after',
  'is_date_exact',
  'starts_with',
  'not_starts_with',
  'ends_with',
  'not_ends_with',
  'semver_eq',
  'semver_neq',
  'semver_gt',
  'semver_gte',
  'semver_lt',
  'semver_lte',
  'semver_tilde',
  'semver_caret',
  'semver_wildcard',
  'flag_evaluates_to',
  'in',
  'not_in',
] as const;
export type FlagPropertyOperator = (typeof FLAG_PROPERTY_OPERATORS)[number];

// Extra keys are typed `unknown` so stored filters keep whatever the UI or SDK tooling sent.
export type FlagProperty = {
  key: string;
  value?: unknown;
  operator?: FlagPropertyOperator | null;
  type: 'person' | 'cohort' | 'group' | 'flag';
  group_type_index?: number | null;
  negation?: boolean;
  /** type "flag" only: keys to evaluate first */
  dependency_chain?: string[];
  [extra: string]: unknown;
};

/** One release condition ("group"); conditions are OR-ed, their properties AND-ed. */
export type FlagCondition = {
  properties?: FlagProperty[];
  rollout_percentage?: number | null;
  variant?: string | null;
  /** per-condition (mixed) targeting; an explicit null means person-aggregated */
  aggregation_group_type_index?: number | null;
  [extra: string]: unknown;
};

export type FlagVariant = {
  key: string;
  name?: string;
  rollout_percentage: number;
  [extra: string]: unknown;
};

export type FlagFilters = {
  groups: FlagCondition[];
  multivariate?: { variants?: FlagVariant[]; [extra: string]: unknown } | null;
  /** variant key (or "true") → JSON text; non-string values are kept until normalizeFlagFilters */
  payloads?: Record<string, unknown>;
  aggregation_group_type_index?: number | null;
  holdout?: { id: number; exclusion_percentage: number; [extra: string]: unknown } | null;
  holdout_groups?: FlagCondition[];
  early_exit?: boolean | null;
  super_groups?: FlagCondition[];
  [extra: string]: unknown;
};

export type FlagFiltersResult =
  | { ok: true; filters: FlagFilters }
  | { ok: false; code: string; detail: string; attr: string };

export type FlagKeyResult =
  | { ok: true; key: string }
  | { ok: false; code: string; detail: string; attr: 'key' };

export const FLAG_KEY_MAX_LENGTH = 400;
const GROUP_TYPES_LIMIT = 5;
const OPERATORS: ReadonlySet<unknown> = new Set(FLAG_PROPERTY_OPERATORS);
const PERSON_SCOPED_TYPES: ReadonlySet<unknown> = new Set(['person', 'cohort', 'flag']);

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** PostHog's messages print Python's `type(value).__name__`; reproduce it for JSON values. */
function pyType(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'string') return 'str';
  return Array.isArray(v) ? 'list' : 'dict';
}

// Thrown only inside checkFilters, so the checks can stop at the first error as PostHog does.
class Invalid extends Error {
  constructor(
    readonly detail: string,
    readonly code = 'invalid_input',
  ) {
    super(detail);
  }
}
function fail(detail: string, code?: string): never {
  throw new Invalid(detail, code);
}

function checkIndex(v: unknown, path: string, rangeName = path): void {
  if (v === null || v === undefined) return;
  if (typeof v !== 'number' || !Number.isInteger(v))
    fail(`${path} must be an integer or null, got ${pyType(v)}`);
  if (v < 0 || v >= GROUP_TYPES_LIMIT)
    fail(`${rangeName} is required to be at least 0 and less than ${GROUP_TYPES_LIMIT}`);
}

function checkRollout(v: unknown, path: string, allowNull: boolean): void {
  if (v === null || v === undefined) {
    if (!allowNull) fail(`${path} must be a number, got null`);
    return;
  }
  if (typeof v !== 'number')
    fail(`${path} must be ${allowNull ? 'a number or null' : 'a number'}, got ${pyType(v)}`);
  if (v < 0 || v > 100) fail(`${path} must be between 0 and 100, got ${v}`);
}

function checkList(v: unknown, path: string): unknown[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) fail(`${path} must be a list, got ${pyType(v)}`);
  return v;
}

function checkObject(v: unknown, path: string): Obj {
  return isObject(v) ? v : fail(`${path} must be an object, got ${pyType(v)}`);
}

/** Same order as PostHog so the first error reported for a bad flag is the same one. */
function checkFilters(f: Obj, requireGroups: boolean): void {
  const groups = checkList(f.groups, 'groups').map((g, i) => checkObject(g, `groups[${i}]`));
  if (requireGroups && groups.length === 0)
    fail('Feature flags must have at least one condition set (group).');

  const flagAggregation = f.aggregation_group_type_index ?? null;
  checkIndex(flagAggregation, 'aggregation_group_type_index');
  const earlyExit = f.early_exit ?? null;
  if (earlyExit !== null && typeof earlyExit !== 'boolean')
    fail(`early_exit must be a boolean or null, got ${pyType(earlyExit)}`);

  const propsByGroup = groups.map((g, i) => {
    const at = `groups[${i}]`;
    const variant = g.variant ?? null;
    if (variant !== null && typeof variant !== 'string')
      fail(`${at}.variant must be a string or null, got ${pyType(variant)}`);
    checkRollout(g.rollout_percentage, `${at}.rollout_percentage`, true);
    checkIndex(g.aggregation_group_type_index, `${at}.aggregation_group_type_index`);
    return checkList(g.properties, `${at}.properties`).map((p, j) => {
      const prop = checkObject(p, `${at}.properties[${j}]`);
      if (typeof prop.key !== 'string')
        fail(`${at}.properties[${j}].key must be a string, got ${pyType(prop.key)}`);
      checkIndex(
        prop.group_type_index,
        `${at}.properties[${j}].group_type_index`,
        'group_type_index',
      );
      return prop;
    });
  });

  const mv = f.multivariate ?? null;
  if (mv !== null && !isObject(mv))
    fail(`multivariate must be an object or null, got ${pyType(mv)}`);
  const variants = checkList(mv?.variants, 'multivariate.variants').map((v, k) => {
    const at = `multivariate.variants[${k}]`;
    const variant = checkObject(v, at);
    if (typeof variant.key !== 'string')
      fail(`${at}.key must be a string, got ${pyType(variant.key)}`);
    if (variant.key === '') fail(`${at}.key must not be empty`);
    checkRollout(variant.rollout_percentage, `${at}.rollout_percentage`, false);
    return variant as { key: string; rollout_percentage: number };
  });
  const variantKeys = new Set(variants.map((v) => v.key));
  if (variantKeys.size !== variants.length)
    fail('Invalid variant definitions: Variant keys must be unique.');

  // A condition's own aggregation wins, even an explicit null (person-aggregated); else the flag's.
  groups.forEach((g, i) => {
    const aggregation = Object.hasOwn(g, 'aggregation_group_type_index')
      ? (g.aggregation_group_type_index ?? null)
      : flagAggregation;
    for (const prop of propsByGroup[i] ?? []) {
      // PostHog's Property class defaults a missing type to "event", which no flag may use.
      const type = prop.type ? String(prop.type) : 'event';
      if (prop.value == null && prop.operator !== 'is_set' && prop.operator !== 'is_not_set') {
        fail(
          `Value must be set for property type ${type} & operator ${String(prop.operator ?? 'None')}`,
        );
      }
      if (aggregation === null) {
        if (!PERSON_SCOPED_TYPES.has(type)) {
          fail(
            'Filters are not valid (person-aggregated conditions can only use person, cohort, and flag properties)',
          );
        }
        if (type === 'flag' && prop.operator !== 'flag_evaluates_to')
          fail("Flag properties must use the 'flag_evaluates_to' operator");
      } else {
        if (type !== 'group')
          fail('Filters are not valid (group-aggregated conditions can only use group properties)');
        if ((prop.group_type_index ?? null) !== aggregation) {
          fail(
            "Filters are not valid (group properties must match the condition set's group type)",
          );
        }
      }
    }
  });

  // Summed in listed order, like Python's sum(), so float totals such as 33.3+33.3+33.4 agree.
  if (variants.length > 0 && variants.reduce((sum, v) => sum + v.rollout_percentage, 0) !== 100) {
    fail('Invalid variant definitions: Variant rollout percentages must sum to 100.');
  }

  groups.forEach((g, i) => {
    // PostHog tests truthiness, so an empty-string override passes.
    if (g.variant && !variantKeys.has(g.variant as string))
      fail('Filters are not valid (variant override does not exist)');
    for (const prop of propsByGroup[i] ?? []) {
      const op = prop.operator;
      if (op != null && !OPERATORS.has(op))
        fail(`Invalid operator: ${String(op)}`, 'invalid_operator');
      if ((op === 'in' || op === 'not_in') && prop.type !== 'cohort') {
        const type = prop.type ? String(prop.type) : 'event';
        fail(
          `The '${op}' operator is only valid for cohort properties, not '${type}' properties.`,
          'invalid_operator',
        );
      }
    }
  });

  // An explicit null is rejected: PostHog only defaults a missing `payloads`.
  const payloads = f.payloads === undefined ? {} : f.payloads;
  if (!isObject(payloads)) fail('Payloads must be passed as a dictionary');
  for (const value of Object.values(payloads)) {
    if (typeof value !== 'string') continue;
    try {
      JSON.parse(value);
    } catch {
      fail('Payload value is not valid JSON');
    }
  }
  const keys = Object.keys(payloads);
  // Python truthiness: `{}` is not multivariate, `{variants: []}` is (and then takes no payloads).
  if (isObject(mv) && Object.keys(mv).length > 0) {
    if (!keys.every((k) => variantKeys.has(k)))
      fail('Payload keys must match a variant key for multivariate flags');
  } else if (keys.length > 1 || keys.some((k) => k !== 'true')) {
    fail("Payload keys must be 'true' for boolean flags");
  }
}

/**
 * Validates a request's `filters`. On success returns a copy with every key kept and `groups`
 * defaulted to []. `undefined` (field absent on create) yields PostHog's default single empty
 * condition; on PATCH the caller should skip the field instead. Pass `requireGroups` on create
 * to reproduce PostHog's "at least one condition set" rule for POST.
 */
export function validateFlagFilters(
  input: unknown,
  options: { requireGroups?: boolean } = {},
): FlagFiltersResult {
  if (input === undefined) return { ok: true, filters: normalizeFlagFilters(undefined) };
  const error = (code: string, detail: string) => ({
    ok: false as const,
    code,
    detail,
    attr: 'filters',
  });
  if (input === null) return error('null', 'This field may not be null.');
  if (!isObject(input))
    return error('not_a_dict', `Expected a dictionary of items but got type "${pyType(input)}".`);
  try {
    checkFilters(input, options.requireGroups ?? false);
  } catch (e) {
    if (e instanceof Invalid) return error(e.code, e.detail);
    throw e;
  }
  const filters = structuredClone(input) as FlagFilters;
  filters.groups ??= [];
  return { ok: true, filters };
}

/** Python's json.dumps defaults (", " / ": " separators, ASCII-only), as PostHog stores payloads. */
function pyJsonDumps(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(pyJsonDumps).join(', ')}]`;
  if (isObject(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${pyJsonDumps(k)}: ${pyJsonDumps(x)}`)
      .join(', ')}}`;
  const text = JSON.stringify(v) ?? 'null';
  return text.replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * The form PostHog stores and returns for validated filters:
 * - absent filters read back as one empty condition (`get_filters` legacy fallback);
 * - `groups` defaults to [];
 * - each condition gets an explicit `aggregation_group_type_index` (inherited from the flag), and
 *   the flag-level value becomes the shared one, or null when conditions differ;
 * - non-string payload values become JSON text, because SDKs and /decide expect strings.
 * No `multivariate`/`payloads` defaults are added: PostHog stores only what was sent.
 */
export function normalizeFlagFilters(filters: FlagFilters | undefined): FlagFilters {
  if (filters === undefined) return { groups: [{ properties: [], rollout_percentage: null }] };
  const out = structuredClone(filters);
  out.groups ??= [];
  const groups = out.groups;
  const flagAggregation = out.aggregation_group_type_index ?? null;
  for (const g of groups) {
    if (!Object.hasOwn(g, 'aggregation_group_type_index'))
      g.aggregation_group_type_index = flagAggregation;
  }
  if (groups.length > 0) {
    const first = groups[0]?.aggregation_group_type_index ?? null;
    const shared = groups.every((g) => (g.aggregation_group_type_index ?? null) === first);
    out.aggregation_group_type_index = shared ? first : null;
  }
  if (isObject(out.payloads)) {
    for (const [key, value] of Object.entries(out.payloads)) {
      if (typeof value !== 'string') out.payloads[key] = pyJsonDumps(value);
    }
  }
  return out;
}

/**
 * PostHog's read-only `is_simple_flag` / `rollout_percentage`: one condition, no properties, not a
 * group flag. Multivariate flags can be simple (PostHog does not look at variants). A condition's
 * own aggregation counts too, so un-normalized and normalized filters give the same answer.
 */
export function deriveFlagFields(filters: FlagFilters | undefined): {
  is_simple_flag: boolean;
  rollout_percentage: number | null;
} {
  const groups =
    filters === undefined ? normalizeFlagFilters(undefined).groups : (filters.groups ?? []);
  const only = groups.length === 1 ? groups[0] : undefined;
  const simple =
    only !== undefined &&
    (only.properties ?? []).length === 0 &&
    (filters?.aggregation_group_type_index ?? null) === null &&
    (only.aggregation_group_type_index ?? null) === null &&
    // Issue #2 asks for PostHog's older rule: a multivariate flag is never "simple".
    (filters?.multivariate?.variants ?? []).length === 0;
  return {
    is_simple_flag: simple,
    rollout_percentage: simple ? (only?.rollout_percentage ?? null) : null,
  };
}

/** DRF CharField(max_length=400) followed by PostHog's `validate_key` character rule. */
export function validateFlagKey(key: unknown): FlagKeyResult {
  const error = (code: string, detail: string) => ({
    ok: false as const,
    code,
    detail,
    attr: 'key' as const,
  });
  if (key === undefined) return error('required', 'This field is required.');
  if (key === null) return error('null', 'This field may not be null.');
  // DRF's CharField accepts numbers and stringifies them; anything else is not a string.
  if (typeof key !== 'string' && typeof key !== 'number')
    return error('invalid_input', 'Not a valid string.');
  const value = String(key).trim();
  if (value === '') return error('blank', 'This field may not be blank.');
  if ([...value].length > FLAG_KEY_MAX_LENGTH) {
    return error(
      'max_length',
      `Ensure this field has no more than ${FLAG_KEY_MAX_LENGTH} characters.`,
    );
  }
  if (!/^[a-zA-Z0-9_-]+$/.test(value)) {
    return error(
      'invalid_key',
      'Only letters, numbers, hyphens (-) & underscores (_) are allowed.',
    );
  }
  return { ok: true, key: value };
}
