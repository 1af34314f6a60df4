import { match } from 'ts-pattern';
import type { Event } from '../../../src/core/event.ts';

/**
 * A dynamic cohort (issue #10, first increment): persons whose properties match a property group,
 * `filters: {properties: {type: "AND" | "OR", values: [...]}}` as PostHog stores it — the shape
 * local evaluation sends in `cohorts` and the flag evaluator reads — or a static cohort, a fixed
 * set of persons. Dynamic memberships are recalculated by the `cohortCalculation` process.
 */
export type CohortFields = { name: string; description: string; filters: CohortFilters };
export type CohortFilters = { properties: PropertyGroup };
export type PropertyGroup = {
  type: 'AND' | 'OR';
  values: (PropertyGroup | Record<string, unknown>)[];
};

export type CohortCreated = Event<
  'CohortCreated',
  {
    cohortId: number;
    projectId: number;
    fields: CohortFields;
    createdAt: string;
    createdByUserId: number | null;
    /** a fixed set of persons (CohortPersonsAdded) instead of a definition; absent: false */
    isStatic?: boolean;
  }
>;
/** carries only the fields whose value changed */
export type CohortUpdated = Event<
  'CohortUpdated',
  { cohortId: number; changes: Partial<CohortFields> }
>;
export type CohortSoftDeleted = Event<'CohortSoftDeleted', { cohortId: number }>;
/** persons (by uuid) put into a static cohort */
export type CohortPersonsAdded = Event<
  'CohortPersonsAdded',
  { cohortId: number; projectId: number; personUuids: string[] }
>;
/** A dynamic cohort's membership is being recalculated (process `cohortCalculation`). */
export type CohortCalculationStarted = Event<
  'CohortCalculationStarted',
  { cohortId: number; projectId: number; at: string }
>;
/** The recalculated membership of a dynamic cohort, as changes (uuids; at most 10,000 each). */
export type CohortMembersChanged = Event<
  'CohortMembersChanged',
  { cohortId: number; projectId: number; added: string[]; removed: string[] }
>;
/** A recalculation ended: the members now (`count`), or the error that stopped it. */
export type CohortCalculated = Event<
  'CohortCalculated',
  { cohortId: number; projectId: number; at: string; count: number | null; error?: string }
>;
export type CohortCalculationEvent =
  | CohortCalculationStarted
  | CohortMembersChanged
  | CohortCalculated;
export type CohortEvent =
  | CohortCreated
  | CohortUpdated
  | CohortSoftDeleted
  | CohortPersonsAdded
  | CohortCalculationEvent;

/** The events that change what a cohort is (its definition or its fixed persons). */
export const cohortDefinitionEventTypes = [
  'CohortCreated',
  'CohortUpdated',
  'CohortSoftDeleted',
  'CohortPersonsAdded',
] as const satisfies readonly CohortEvent['type'][];
export const cohortEventTypes: readonly CohortEvent['type'][] = [
  ...cohortDefinitionEventTypes,
  'CohortCalculationStarted',
  'CohortMembersChanged',
  'CohortCalculated',
];
export const cohortStream = (cohortId: number) => `cohort-${cohortId}`;

export type CohortState =
  | { status: 'absent' }
  | {
      status: 'present';
      projectId: number;
      fields: CohortFields;
      deleted: boolean;
      isStatic: boolean;
    };

export const initialCohortState = (): CohortState => ({ status: 'absent' });

export function evolveCohort(state: CohortState, event: CohortEvent): CohortState {
  if (state.status === 'absent') {
    if (event.type !== 'CohortCreated') return state;
    return {
      status: 'present',
      projectId: event.data.projectId,
      fields: event.data.fields,
      deleted: false,
      isStatic: event.data.isStatic === true,
    };
  }
  return match(event)
    .with({ type: 'CohortCreated' }, () => state)
    .with({ type: 'CohortUpdated' }, (e) => ({
      ...state,
      fields: { ...state.fields, ...e.data.changes },
    }))
    .with({ type: 'CohortSoftDeleted' }, () => ({ ...state, deleted: true }))
    .with(
      { type: 'CohortPersonsAdded' },
      { type: 'CohortCalculationStarted' },
      { type: 'CohortMembersChanged' },
      { type: 'CohortCalculated' },
      () => state,
    )
    .exhaustive();
}
