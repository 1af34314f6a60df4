/**
 * Flag dependencies: properties `{type: "flag", key, operator: "flag_evaluates_to", value}`.
 * The key names the flag (by key, or by id as PostHog stores it); its `dependency_chain` is not
 * needed, the evaluator follows the references itself. A flag that takes part in a cycle of
 * references, or depends on one, is not evaluable (checked over the definitions, before any
 * evaluation, so the answer does not depend on which filter happens to be false first).
 */
import type { FlagProperty } from '../../../commands/featureFlags/model/flagFilters.ts';
import { failure, type Outcome } from './outcome.ts';
import { asDependencyValue, filtersOf, resolveFlag, type Session } from './session.ts';
import type { EvaluableFlag } from './types.ts';

export function dependencyRefs(flag: EvaluableFlag): string[] {
  const refs: string[] = [];
  for (const condition of filtersOf(flag).groups ?? []) {
    for (const property of condition.properties ?? []) {
      if (property.type === 'flag') refs.push(String(property.key));
    }
  }
  return refs;
}

/** Whether the flag is on, or leads to, a cycle of flag references. */
export function inCycle(session: Session, flag: EvaluableFlag): boolean {
  const cycles = session.catalog.cycles;
  const state = cycles.get(flag.key);
  if (state === 'visiting') return true;
  if (state !== undefined) return state === 'cycle';
  cycles.set(flag.key, 'visiting');
  let cyclic = false;
  for (const ref of dependencyRefs(flag)) {
    const dependency = resolveFlag(session, ref);
    if (dependency && inCycle(session, dependency)) cyclic = true;
  }
  cycles.set(flag.key, cyclic ? 'cycle' : 'ok');
  return cyclic;
}

/**
 * posthog-node 5's `flag_evaluates_to`: `true` matches any enabled value (true or a variant),
 * `false` matches only false, a string matches that variant; anything else never matches.
 */
export function flagEvaluatesTo(expected: unknown, value: string | boolean): boolean {
  if (typeof expected === 'boolean')
    return expected === value || (expected && typeof value === 'string' && value !== '');
  if (typeof expected === 'string') return value === expected;
  return false;
}

export function dependencyOutcome(session: Session, property: FlagProperty): Outcome {
  const ref = String(property.key);
  const dependency = resolveFlag(session, ref);
  if (!dependency) return failure('missing_dependency', `flag "${ref}" does not exist`);
  if (session.inProgress.has(dependency.key))
    return failure('dependency_cycle', `flag "${dependency.key}" depends on itself`);
  const result = asDependencyValue(session.evaluate(dependency));
  return 'value' in result ? flagEvaluatesTo(property.value, result.value) : result;
}
