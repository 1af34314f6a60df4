/**
 * The flag evaluator (issue #9): pure, no I/O, no clock of its own. For one distinct id (and its
 * groups) it answers every flag with a value and PostHog's reason, or says what it still needs
 * (`inconclusive`), or that this server cannot decide it (`not_evaluable`). One flag:
 *
 * 1. inactive or deleted → false, `flag_disabled`;
 * 2. on a cycle of flag dependencies → not evaluable;
 * 3. a group flag whose group the request did not pass → false, `no_group_type`;
 * 4. early access: `feature_enrollment` or the first `super_groups` condition, when the person has
 *    its property → that decides (`super_condition_value`);
 * 5. `holdout` → `holdout-<id>` for the held-out share (`holdout_condition_value`);
 * 6. conditions in listed order (no variant-override sorting): the first that matches gives the
 *    value (override variant if valid, else the hashed variant, else true); an unresolved
 *    condition before it leaves the flag unresolved, since it might have matched first;
 *    `early_exit` stops at the first condition whose filters match but whose rollout excludes;
 * 7. no match → false with the strongest reason (out of rollout > no match > no group type; the
 *    later condition on a tie, as the flags service reports it).
 */
import type { FlagFilters } from '../../../commands/featureFlags/model/flagFilters.ts';
import { cohortOutcome } from './cohorts.ts';
import { type ConditionResult, conditionAggregation, evaluateCondition } from './conditions.ts';
import { inCycle } from './dependencies.ts';
import { holdoutHash } from './hashing.ts';
import { missingPerson, type Unresolved, worse } from './outcome.ts';
import { createSession, filtersOf, groupName, personIdentifier, type Session } from './session.ts';
import type {
  EvaluableFlag,
  EvaluationContext,
  EvaluationOptions,
  EvaluationReason,
  FlagEvaluation,
  ReasonCode,
} from './types.ts';

const SCORE: Partial<Record<ReasonCode, number>> = {
  out_of_rollout_bound: 3,
  no_condition_match: 2,
  no_group_type: 1,
};
const GROUPS_NOT_EVALUATED =
  'No matching condition set (group conditions were not evaluated because no group type was provided)';

function describe(code: ReasonCode, index: number | null): string {
  switch (code) {
    case 'condition_match':
      return `Matched condition set ${(index ?? 0) + 1}`;
    case 'no_condition_match':
      return 'No matching condition set';
    case 'out_of_rollout_bound':
      return 'Out of rollout bound';
    case 'no_group_type':
      return 'No group type';
    case 'super_condition_value':
      return 'Super condition value';
    case 'holdout_condition_value':
      return 'Holdout condition value';
    case 'flag_disabled':
      return 'Feature flag is disabled';
  }
}

// Reasons are immutable and few (a code and a condition index): one object each, shared by every
// evaluation, so an answer for 50 flags allocates no reason and formats no description.
const reasons = new Map<ReasonCode, EvaluationReason[]>();
function reason(code: ReasonCode, index: number | null, description?: string): EvaluationReason {
  if (description !== undefined) return { code, condition_index: index, description };
  let byIndex = reasons.get(code);
  if (!byIndex) {
    byIndex = [];
    reasons.set(code, byIndex);
  }
  const slot = index === null ? 0 : index + 1;
  let shared = byIndex[slot];
  if (!shared) {
    shared = Object.freeze({ code, condition_index: index, description: describe(code, index) });
    byIndex[slot] = shared;
  }
  return shared;
}

function payloadFor(filters: FlagFilters, value: string): string | null {
  const payload = filters.payloads?.[value];
  if (payload === undefined || payload === null) return null;
  return typeof payload === 'string' ? payload : JSON.stringify(payload);
}

function evaluated(
  flag: EvaluableFlag,
  enabled: boolean,
  variant: string | null,
  why: EvaluationReason,
): FlagEvaluation {
  const payload = enabled ? payloadFor(filtersOf(flag), variant ?? 'true') : null;
  return { outcome: 'evaluated', key: flag.key, enabled, variant, reason: why, payload };
}

function unresolved(flag: EvaluableFlag, u: Unresolved): FlagEvaluation {
  if (u.unresolved === 'error')
    return { outcome: 'not_evaluable', key: flag.key, error: u.error, description: u.description };
  const what = [
    u.needs.person ? 'person properties' : '',
    ...u.needs.groups.map((g) => `${g} group properties`),
    u.needs.hashKeyOverrides ? 'hash key overrides' : '',
  ].filter(Boolean);
  return {
    outcome: 'inconclusive',
    key: flag.key,
    needs: u.needs,
    description: `needs ${what.join(', ')}`,
  };
}

/** Early access (step 4): decided, or undefined to go on, or unresolved. */
function earlyAccess(session: Session, flag: EvaluableFlag): FlagEvaluation | undefined {
  const filters = filtersOf(flag);
  if (filters.feature_enrollment !== true && !filters.super_groups?.length) return undefined;
  const person = session.context.person;
  const has = (key: string) =>
    Object.hasOwn(person.properties, key) && person.properties[key] !== undefined;
  const decided = (enabled: boolean) =>
    evaluated(flag, enabled, null, reason('super_condition_value', 0));
  if (filters.feature_enrollment === true) {
    const key = `$feature_enrollment/${flag.key}`;
    if (has(key)) {
      const value = person.properties[key];
      return decided(value === true || value === 'true');
    }
    return person.complete ? undefined : unresolved(flag, missingPerson());
  }
  const superCondition = filters.super_groups?.[0];
  const keys = (superCondition?.properties ?? []).map((p) => p.key);
  if (!superCondition || keys.length === 0) return undefined;
  if (!keys.some(has)) return person.complete ? undefined : unresolved(flag, missingPerson());
  const result = evaluateCondition(session, flag, superCondition, null);
  if ('unresolved' in result) return unresolved(flag, result);
  return decided(result.kind === 'match');
}

/** Holdout (step 5): the held-out value, or undefined, or unresolved. */
function holdout(
  session: Session,
  flag: EvaluableFlag,
  groupKey: string | undefined,
): FlagEvaluation | undefined {
  const h = filtersOf(flag).holdout;
  if (!h || h.id === null || h.id === undefined) return undefined;
  const percentage = Math.min(Math.max(Number(h.exclusion_percentage), 0), 100);
  if (!Number.isFinite(percentage)) return undefined;
  const id = groupKey ?? personIdentifier(session, flag, true);
  if (id !== null && typeof id !== 'string') return unresolved(flag, id);
  if (percentage < 100 && holdoutHash(id ?? session.context.distinctId) > percentage / 100)
    return undefined;
  return evaluated(flag, true, `holdout-${h.id}`, reason('holdout_condition_value', null));
}

function evaluateOne(session: Session, flag: EvaluableFlag): FlagEvaluation {
  if (!flag.active || flag.deleted)
    return evaluated(flag, false, null, reason('flag_disabled', null));
  if (inCycle(session, flag)) {
    return {
      outcome: 'not_evaluable',
      key: flag.key,
      error: 'dependency_cycle',
      description: 'the flag is on, or depends on, a cycle of flag dependencies',
    };
  }
  const filters = filtersOf(flag);
  const flagAggregation = filters.aggregation_group_type_index ?? null;
  const group = flagAggregation === null ? undefined : groupName(session, flagAggregation);
  if (flagAggregation !== null && group === undefined)
    return evaluated(flag, false, null, reason('no_group_type', null));

  const groupKey = group === undefined ? undefined : session.context.groups![group]!.key;
  const early = earlyAccess(session, flag) ?? holdout(session, flag, groupKey);
  if (early) return early;

  let pending: Unresolved | undefined;
  let best: { code: ReasonCode; index: number } | undefined;
  let skippedGroups = false;
  const conditions = filters.groups ?? [];
  for (let index = 0; index < conditions.length; index++) {
    // Checked per condition: one flag of 200 heavy conditions must not outlive the request.
    if (session.pastDeadline()) return pastDeadline(flag);
    const condition = conditions[index]!;
    const result: ConditionResult = evaluateCondition(
      session,
      flag,
      condition,
      conditionAggregation(condition, filters),
    );
    if ('unresolved' in result) {
      pending = worse(pending, result);
      continue;
    }
    if (result.kind === 'match') {
      if (pending) return unresolved(flag, pending);
      return evaluated(flag, true, result.variant, reason('condition_match', index));
    }
    skippedGroups ||= result.kind === 'no_group_type';
    if ((SCORE[result.kind] ?? 0) >= (SCORE[best?.code ?? 'flag_disabled'] ?? 0))
      best = { code: result.kind, index };
    if (filters.early_exit === true && result.kind === 'out_of_rollout_bound') break;
  }
  if (pending) return unresolved(flag, pending);
  if (!best) return evaluated(flag, false, null, reason('no_condition_match', null));
  const description =
    best.code === 'no_condition_match' && skippedGroups ? GROUPS_NOT_EVALUATED : undefined;
  return evaluated(flag, false, null, reason(best.code, best.index, description));
}

const pastDeadline = (flag: EvaluableFlag): FlagEvaluation => ({
  outcome: 'not_evaluable',
  key: flag.key,
  error: 'deadline_exceeded',
  description: 'the request ran out of evaluation time before this flag was decided',
});

function evaluateMemo(session: Session, flag: EvaluableFlag): FlagEvaluation {
  const known = session.results.get(flag.key);
  if (known) return known;
  session.inProgress.add(flag.key);
  const result = evaluateOne(session, flag);
  session.inProgress.delete(flag.key);
  session.results.set(flag.key, result);
  return result;
}

/**
 * Evaluates `flags` (a project's flags; deleted ones may be left out) for one context, in the
 * order given. `options.keys` restricts the answer to those keys; dependencies on other flags of
 * `flags` are evaluated either way.
 */
export function evaluateFlags(
  flags: readonly EvaluableFlag[],
  context: EvaluationContext,
  options: EvaluationOptions,
): FlagEvaluation[] {
  const session = createSession(flags, context, options.now, evaluateMemo, options.deadlineMs);
  const wanted = options.keys ? new Set(options.keys) : undefined;
  // Without dependencies between the flags, no result is read twice: skip the memo's bookkeeping
  // (a cohort that names a flag still goes through session.evaluate, memoised).
  const evaluate = session.catalog.hasDependencies ? evaluateMemo : evaluateOne;
  const out: FlagEvaluation[] = [];
  for (const f of flags) {
    if (wanted && !wanted.has(f.key)) continue;
    out.push(session.pastDeadline() ? pastDeadline(f) : evaluate(session, f));
  }
  return out;
}

/** One flag; `others` are the flags it may depend on (the rest of the project's flags). */
export function evaluateFlag(
  flag: EvaluableFlag,
  context: EvaluationContext,
  options: EvaluationOptions & { others?: readonly EvaluableFlag[] },
): FlagEvaluation {
  const others = (options.others ?? []).filter((f) => f.key !== flag.key);
  return evaluateMemo(createSession([flag, ...others], context, options.now, evaluateMemo), flag);
}

/**
 * The ids of the cohorts (of `context.cohorts`) whose definition the person matches, with the
 * same semantics as a flag's cohort condition; a cohort that cannot be decided is left out.
 */
export function cohortMembership(
  context: EvaluationContext,
  options: Pick<EvaluationOptions, 'now'>,
  /** only these cohorts (default: every one of `context.cohorts`) */
  only?: readonly string[],
): string[] {
  const session = createSession([], context, options.now, evaluateMemo);
  return (only ?? Object.keys(context.cohorts ?? {})).filter(
    (id) => cohortOutcome(session, { key: 'id', type: 'cohort', value: id }) === true,
  );
}

export type {
  EvaluableFlag,
  EvaluationContext,
  EvaluationOptions,
  FlagEvaluation,
} from './types.ts';
export { flagValue } from './types.ts';
