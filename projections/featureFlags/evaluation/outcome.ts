/**
 * The evaluator's three-valued logic. A filter, a cohort or a condition is true, false, or
 * unresolved: `missing` (data the context did not hold; loading it may decide) or `error` (this
 * server cannot decide it at all). Combining is order-independent, so the answer never depends
 * on the order of a condition's filters:
 * - AND: any false → false; else any missing → missing (needs merged); else any error → error.
 * - OR: any true → true; else the same ranking.
 * A missing outranks an error because loading the data may still turn the result into a false.
 */
import type { Needs, NotEvaluableCode } from './types.ts';

export type Missing = { unresolved: 'missing'; needs: Needs };
export type Failure = { unresolved: 'error'; error: NotEvaluableCode; description: string };
export type Unresolved = Missing | Failure;
export type Outcome = boolean | Unresolved;

export const noNeeds = (): Needs => ({ person: false, groups: [], hashKeyOverrides: false });

export const missingPerson = (): Missing => ({
  unresolved: 'missing',
  needs: { person: true, groups: [], hashKeyOverrides: false },
});

export const missingGroup = (typeName: string): Missing => ({
  unresolved: 'missing',
  needs: { person: false, groups: [typeName], hashKeyOverrides: false },
});

export const missingHashKeyOverrides = (): Missing => ({
  unresolved: 'missing',
  needs: { person: false, groups: [], hashKeyOverrides: true },
});

export const failure = (error: NotEvaluableCode, description: string): Failure => ({
  unresolved: 'error',
  error,
  description,
});

export function mergeNeeds(a: Needs, b: Needs): Needs {
  return {
    person: a.person || b.person,
    groups: [...new Set([...a.groups, ...b.groups])],
    hashKeyOverrides: a.hashKeyOverrides || b.hashKeyOverrides,
  };
}

/** The stronger of two unresolved outcomes (missing beats error; needs are merged). */
export function worse(a: Unresolved | undefined, b: Unresolved): Unresolved {
  if (a === undefined) return b;
  if (a.unresolved === 'missing' && b.unresolved === 'missing')
    return { unresolved: 'missing', needs: mergeNeeds(a.needs, b.needs) };
  if (a.unresolved === 'missing') return a;
  if (b.unresolved === 'missing') return b;
  return a;
}

/** Folds outcomes with AND (`decisive` = false) or OR (`decisive` = true). */
export function combine(outcomes: Iterable<Outcome>, decisive: boolean): Outcome {
  let pending: Unresolved | undefined;
  for (const o of outcomes) {
    if (o === decisive) return decisive;
    if (typeof o !== 'boolean') pending = worse(pending, o);
  }
  return pending ?? !decisive;
}

export const not = (o: Outcome): Outcome => (typeof o === 'boolean' ? !o : o);
