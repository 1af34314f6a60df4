/**
 * Cohort filters `{type: "cohort", value: <id>, operator?: "in" | "not_in"}`. A cohort is
 * evaluated from its definition in `context.cohorts` (the local-evaluation shape: nested AND/OR
 * groups of person filters, with `negation`), against the person's properties; a static cohort
 * (`context.staticCohortIds`) from the person's memberships, loaded with the stored person. A
 * cohort that is in neither makes the filter not evaluable: never a silent false.
 */
import type { FlagProperty } from '../../../commands/featureFlags/model/flagFilters.ts';
import { dependencyOutcome } from './dependencies.ts';
import { combine, failure, missingPerson, not, type Outcome } from './outcome.ts';
import { matchProperty } from './propertyMatch.ts';
import type { Session } from './session.ts';
import type { CohortPropertyGroup } from './types.ts';

type Item = CohortPropertyGroup | Readonly<Record<string, unknown>>;
const isGroup = (item: Item): item is CohortPropertyGroup =>
  typeof item === 'object' && item !== null && 'values' in item;

export function cohortOutcome(
  session: Session,
  property: FlagProperty,
  visiting: ReadonlySet<string> = new Set(),
): Outcome {
  const id = String(property.value);
  const definition = session.context.cohorts?.[id];
  if (definition === undefined && session.context.staticCohortIds?.has(id)) {
    const members = session.context.staticCohortMemberships;
    if (members === undefined) return missingPerson();
    return property.operator === 'not_in' ? !members.has(id) : members.has(id);
  }
  if (definition === undefined)
    return failure('cohort_unavailable', `cohort ${id} is not available for evaluation`);
  if (visiting.has(id)) return failure('cohort_unavailable', `cohort ${id} refers to itself`);
  const inCohort = groupOutcome(session, definition, new Set([...visiting, id]));
  return property.operator === 'not_in' ? not(inCohort) : inCohort;
}

function groupOutcome(
  session: Session,
  group: CohortPropertyGroup,
  visiting: ReadonlySet<string>,
): Outcome {
  if (Object.keys(group).length === 0) return true;
  const type = group.type === 'property' ? 'AND' : group.type;
  if (type !== 'AND' && type !== 'OR')
    return failure('cohort_unavailable', `cohort group type ${String(group.type)}`);
  const values = group.values ?? [];
  const anyOf = type === 'OR';
  if (values.length === 0) return !anyOf;
  return combine(
    values.map((item) =>
      isGroup(item)
        ? groupOutcome(session, item, visiting)
        : itemOutcome(session, item as unknown as FlagProperty, visiting),
    ),
    anyOf,
  );
}

function itemOutcome(
  session: Session,
  property: FlagProperty,
  visiting: ReadonlySet<string>,
): Outcome {
  const outcome =
    property.type === 'cohort'
      ? cohortOutcome(session, property, visiting)
      : property.type === 'flag'
        ? dependencyOutcome(session, property)
        : matchProperty(property, session.context.person, session.now);
  return property.negation ? not(outcome) : outcome;
}
