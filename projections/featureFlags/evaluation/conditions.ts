/**
 * One release condition: its filters (AND), then its rollout, then its value. A condition
 * aggregates by its own `aggregation_group_type_index` when it has the key (an explicit null is
 * person-aggregated), else by the flag's; a group condition uses that group's properties and key,
 * and is skipped (`no_group_type`) when the request did not pass the group.
 *
 * This is the hot path of /decide: no closures or generators per call.
 */
import type {
  FlagCondition,
  FlagFilters,
  FlagProperty,
} from '../../../commands/featureFlags/model/flagFilters.ts';
import { cohortOutcome } from './cohorts.ts';
import { dependencyOutcome } from './dependencies.ts';
import { inRollout, variantFor } from './hashing.ts';
import { type Outcome, type Unresolved, worse } from './outcome.ts';
import { matchProperty } from './propertyMatch.ts';
import { groupName, personIdentifier, type Session } from './session.ts';
import type { EvaluableFlag, PropertySource } from './types.ts';

export type ConditionResult =
  | { kind: 'match'; variant: string | null }
  | { kind: 'no_condition_match' | 'out_of_rollout_bound' | 'no_group_type' }
  | Unresolved;

const NO_MATCH: ConditionResult = { kind: 'no_condition_match' };
const OUT_OF_ROLLOUT: ConditionResult = { kind: 'out_of_rollout_bound' };
const NO_GROUP_TYPE: ConditionResult = { kind: 'no_group_type' };
const MATCH_BOOLEAN: ConditionResult = { kind: 'match', variant: null };

export function conditionAggregation(
  condition: FlagCondition,
  filters: FlagFilters,
): number | null {
  return condition.aggregation_group_type_index !== undefined
    ? (condition.aggregation_group_type_index ?? null)
    : (filters.aggregation_group_type_index ?? null);
}

/** The filters AND-ed; any false wins, whatever the order (see outcome.ts). */
function filtersOutcome(
  session: Session,
  properties: readonly FlagProperty[],
  source: PropertySource,
  group: string | undefined,
): Outcome {
  let pending: Unresolved | undefined;
  for (const property of properties) {
    const outcome =
      property.type === 'cohort'
        ? cohortOutcome(session, property)
        : property.type === 'flag'
          ? dependencyOutcome(session, property)
          : matchProperty(property, source, session.now, group);
    if (outcome === false) return false;
    if (outcome !== true) pending = worse(pending, outcome);
  }
  return pending ?? true;
}

/**
 * Evaluates `condition` of `flag` under `aggregation`. A person condition of a flag bucketed by
 * device id is skipped as out of rollout when the request has no device id (the flags service's
 * rule). The hash is computed only when it can change the answer (a rollout under 100, or a
 * variant to pick).
 */
export function evaluateCondition(
  session: Session,
  flag: EvaluableFlag,
  condition: FlagCondition,
  aggregation: number | null,
): ConditionResult {
  const { context } = session;
  let source: PropertySource = context.person;
  let group: string | undefined;
  if (aggregation === null) {
    if (flag.bucketing_identifier === 'device_id' && !context.deviceId) return OUT_OF_ROLLOUT;
  } else {
    group = groupName(session, aggregation);
    if (group === undefined) return NO_GROUP_TYPE;
    source = context.groups![group]!;
  }

  const properties = condition.properties;
  if (properties && properties.length > 0) {
    const matched = filtersOutcome(session, properties, source, group);
    if (matched === false) return NO_MATCH;
    if (matched !== true) return matched;
  }

  let identifier: string | null | Unresolved | undefined;
  const rollout = condition.rollout_percentage;
  if (rollout !== null && rollout !== undefined && rollout < 100) {
    identifier =
      group === undefined ? personIdentifier(session, flag) : context.groups![group]!.key;
    if (typeof identifier !== 'string') return identifier ?? OUT_OF_ROLLOUT;
    if (!inRollout(flag.key, identifier, rollout)) return OUT_OF_ROLLOUT;
  }

  const variants = flag.filters?.multivariate?.variants;
  if (!variants || variants.length === 0) return MATCH_BOOLEAN;
  const override = condition.variant;
  if (override && variants.some((v) => v.key === override))
    return { kind: 'match', variant: override };
  identifier ??=
    group === undefined ? personIdentifier(session, flag) : context.groups![group]!.key;
  if (typeof identifier !== 'string') return identifier ?? OUT_OF_ROLLOUT;
  return { kind: 'match', variant: variantFor(flag.key, identifier, variants) ?? null };
}
