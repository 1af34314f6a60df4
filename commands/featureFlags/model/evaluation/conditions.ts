/**
 * One release condition: its filters (AND), then its rollout, then its value. A condition
 * aggregates by its own `aggregation_group_type_index` when it has the key (an explicit null is
 * person-aggregated), else by the flag's; a group condition uses that group's properties and key,
 * and is skipped (`no_group_type`) when the request did not pass the group.
 */
import type { FlagCondition, FlagFilters, FlagProperty } from '../flagFilters.ts';
import { cohortOutcome } from './cohorts.ts';
import { dependencyOutcome } from './dependencies.ts';
import { inRollout, variantFor } from './hashing.ts';
import { combine, missingGroup, missingPerson, type Outcome, type Unresolved } from './outcome.ts';
import { matchProperty } from './propertyMatch.ts';
import { groupOf, personIdentifier, type Session } from './session.ts';
import type { EvaluableFlag, PropertySource } from './types.ts';

export type ConditionResult =
  | { kind: 'match'; variant: string | null }
  | { kind: 'no_condition_match' | 'out_of_rollout_bound' | 'no_group_type' }
  | Unresolved;

export function conditionAggregation(
  condition: FlagCondition,
  filters: FlagFilters,
): number | null {
  return condition.aggregation_group_type_index !== undefined
    ? (condition.aggregation_group_type_index ?? null)
    : (filters.aggregation_group_type_index ?? null);
}

function* filterOutcomes(
  session: Session,
  properties: readonly FlagProperty[],
  source: PropertySource,
  onMissing: () => Outcome,
): Generator<Outcome> {
  for (const property of properties) {
    if (property.type === 'cohort') yield cohortOutcome(session, property);
    else if (property.type === 'flag') yield dependencyOutcome(session, property);
    else yield matchProperty(property, source, session.now, onMissing);
  }
}

/**
 * Evaluates `condition` of `flag` under `aggregation`. A person condition of a flag bucketed by
 * device id is skipped as out of rollout when the request has no device id (the flags service's
 * rule).
 */
export function evaluateCondition(
  session: Session,
  flag: EvaluableFlag,
  condition: FlagCondition,
  aggregation: number | null,
): ConditionResult {
  let source: PropertySource = session.context.person;
  let onMissing: () => Outcome = missingPerson;
  let identifier: () => string | null | Unresolved = () => personIdentifier(session, flag);
  if (
    aggregation === null &&
    flag.bucketing_identifier === 'device_id' &&
    !session.context.deviceId
  )
    return { kind: 'out_of_rollout_bound' };
  if (aggregation !== null) {
    const group = groupOf(session, aggregation);
    if (!group) return { kind: 'no_group_type' };
    source = group;
    onMissing = () => missingGroup(group.name);
    identifier = () => group.key;
  }

  const properties = condition.properties ?? [];
  const matched = combine(filterOutcomes(session, properties, source, onMissing), false);
  if (matched === false) return { kind: 'no_condition_match' };
  if (matched !== true) return matched;

  // The hash is read only when it can change the answer (a rollout under 100, or a variant).
  let id: string | null | Unresolved | undefined;
  const getId = () => {
    id ??= identifier();
    return id;
  };
  const rollout = condition.rollout_percentage;
  if (rollout !== null && rollout !== undefined && rollout < 100) {
    const bucket = getId();
    if (typeof bucket !== 'string') return bucket ?? { kind: 'out_of_rollout_bound' };
    if (!inRollout(flag.key, bucket, rollout)) return { kind: 'out_of_rollout_bound' };
  }

  const variants = flag.filters?.multivariate?.variants ?? [];
  const override = condition.variant;
  if (override && variants.some((v) => v.key === override))
    return { kind: 'match', variant: override };
  if (variants.length === 0) return { kind: 'match', variant: null };
  const bucket = getId();
  if (typeof bucket !== 'string') return bucket ?? { kind: 'out_of_rollout_bound' };
  return { kind: 'match', variant: variantFor(flag.key, bucket, variants) ?? null };
}
