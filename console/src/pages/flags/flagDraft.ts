// The generated types only (no client): test/console/flagDraft.test.ts runs this file under Node.
import type { components } from '../../api/schema.d.ts';

type Flag = components['schemas']['FeatureFlag'];
type FlagInput = components['schemas']['FeatureFlagCreateInput'];

/**
 * The edit form's state: the flag's `filters` as text fields. Turning it back into `filters` keeps every key the
 * form does not show (holdouts, super groups, extra keys SDK tooling wrote), so an edit never drops them.
 * Values are not checked here: the API validates and its 400 is shown beside the field it names.
 */
export type PropertyDraft = { key: string; type: string; operator: string; value: string };
export type ConditionDraft = {
  properties: PropertyDraft[];
  rollout: string;
  variant: string;
  extra: Record<string, unknown>;
};
export type VariantDraft = { key: string; name: string; rollout: string };
export type FlagDraft = {
  key: string;
  name: string;
  active: boolean;
  continuity: boolean;
  /** '' aggregates by person; a number is the group type index of a group flag */
  groupType: string;
  conditions: ConditionDraft[];
  variants: VariantDraft[];
  /** variant key (or "true" for a boolean flag) → JSON text */
  payloads: Record<string, string>;
  original: Record<string, unknown>;
};

/** The operators a person/group property takes in the form; the API accepts more (kept when not edited). */
export const OPERATORS = [
  'exact',
  'is_not',
  'icontains',
  'not_icontains',
  'regex',
  'not_regex',
  'gt',
  'gte',
  'lt',
  'lte',
  'is_set',
  'is_not_set',
  'is_date_before',
  'is_date_after',
  'in',
  'not_in',
] as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown) =>
  v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);

const valueText = (v: unknown) => (Array.isArray(v) ? v.map(text).join(', ') : text(v));

/** Lists are comma separated in the form (PostHog's UI sends `exact` values as a list); numbers stay numbers. */
function filterValue(operator: string, raw: string): unknown {
  if (operator === 'is_set' || operator === 'is_not_set') return operator;
  if (operator === 'exact' || operator === 'is_not') return raw.split(',').map((s) => s.trim());
  if (
    ['gt', 'gte', 'lt', 'lte'].includes(operator) &&
    raw.trim() !== '' &&
    !Number.isNaN(Number(raw))
  )
    return Number(raw);
  return raw;
}

/** '' → null (no rollout: everyone matching); anything else goes as a number, or as typed for the API to refuse. */
const rolloutOf = (raw: string): unknown =>
  raw.trim() === '' ? null : Number.isNaN(Number(raw)) ? raw : Number(raw);

export const emptyCondition = (): ConditionDraft => ({
  properties: [],
  rollout: '100',
  variant: '',
  extra: {},
});
export const emptyProperty = (): PropertyDraft => ({
  key: '',
  type: 'person',
  operator: 'exact',
  value: '',
});

export function draftOf(flag: Flag | null): FlagDraft {
  const filters = (flag?.filters ?? {}) as Obj;
  const groups = Array.isArray(filters.groups) ? filters.groups.filter(isObj) : [];
  const mv = isObj(filters.multivariate) ? filters.multivariate : {};
  const variants = Array.isArray(mv.variants) ? mv.variants.filter(isObj) : [];
  const payloads = isObj(filters.payloads) ? filters.payloads : {};
  return {
    key: flag?.key ?? '',
    name: flag?.name ?? '',
    active: flag?.active ?? true,
    continuity: flag?.ensure_experience_continuity ?? false,
    groupType: text(filters.aggregation_group_type_index),
    conditions: flag
      ? groups.map(({ properties, rollout_percentage, variant, ...extra }) => ({
          properties: (Array.isArray(properties) ? properties.filter(isObj) : []).map((p) => ({
            key: text(p.key),
            type: text(p.type) || 'person',
            operator: text(p.operator) || 'exact',
            value: valueText(p.value),
          })),
          rollout: text(rollout_percentage),
          variant: text(variant),
          extra,
        }))
      : [emptyCondition()],
    variants: variants.map((v) => ({
      key: text(v.key),
      name: text(v.name),
      rollout: text(v.rollout_percentage),
    })),
    payloads: Object.fromEntries(Object.entries(payloads).map(([k, v]) => [k, text(v)])),
    original: filters,
  };
}

/** The payload keys the form offers: one per variant, or "true" for a boolean flag. */
export const payloadKeys = (draft: FlagDraft) =>
  draft.variants.length ? draft.variants.map((v) => v.key).filter(Boolean) : ['true'];

export function inputOf(draft: FlagDraft): FlagInput {
  const keys = new Set(payloadKeys(draft));
  const payloads = Object.fromEntries(
    Object.entries(draft.payloads).filter(([k, v]) => keys.has(k) && v.trim() !== ''),
  );
  const filters: Obj = {
    ...draft.original,
    groups: draft.conditions.map((c) => ({
      ...c.extra,
      properties: c.properties.map((p) => ({
        key: p.key,
        type: p.type,
        operator: p.operator,
        value: filterValue(p.operator, p.value),
        ...(p.type === 'group' && draft.groupType !== ''
          ? { group_type_index: Number(draft.groupType) }
          : {}),
      })),
      rollout_percentage: rolloutOf(c.rollout),
      ...(c.variant ? { variant: c.variant } : { variant: null }),
    })),
    multivariate: draft.variants.length
      ? {
          variants: draft.variants.map((v) => ({
            key: v.key,
            name: v.name,
            rollout_percentage: rolloutOf(v.rollout),
          })),
        }
      : null,
    payloads,
    aggregation_group_type_index: draft.groupType === '' ? null : Number(draft.groupType),
  };
  return {
    key: draft.key,
    name: draft.name,
    active: draft.active,
    ensure_experience_continuity: draft.continuity,
    filters,
  };
}

/** "50% of persons matching 2 conditions": the list's one-line summary of who gets the flag. */
export function rolloutSummary(flag: Flag): string {
  const filters = flag.filters as Obj;
  const groups = Array.isArray(filters.groups) ? filters.groups.filter(isObj) : [];
  const who =
    typeof filters.aggregation_group_type_index === 'number'
      ? `groups (type ${filters.aggregation_group_type_index})`
      : 'persons';
  if (groups.length === 0) return `No conditions: off for all ${who}`;
  const parts = groups.map((g) => {
    const pct = typeof g.rollout_percentage === 'number' ? g.rollout_percentage : 100;
    const props = Array.isArray(g.properties) ? g.properties.length : 0;
    return props
      ? `${pct}% of ${who} matching ${props} filter${props > 1 ? 's' : ''}`
      : `${pct}% of ${who}`;
  });
  return parts.join('; or ');
}
