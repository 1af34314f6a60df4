import { isDeepStrictEqual } from 'node:util';
import { match } from 'ts-pattern';
import type { Decider } from '../../src/core/decider.ts';
import { type DomainError, invalidInput, notFound } from '../../src/core/errors.ts';
import {
  type CohortEvent,
  type CohortFields,
  type CohortState,
  evolveCohort,
  initialCohortState,
} from './model/cohort.ts';

export type CreateCohort = Readonly<{
  type: 'CreateCohort';
  cohortId: number;
  projectId: number;
  fields: CohortFields;
  createdAt: string;
  createdByUserId: number | null;
  /** a static cohort and its persons (uuids), added in chunks */
  staticPersonUuids?: readonly string[];
}>;
export type PatchCohort = Readonly<{
  type: 'PatchCohort';
  cohortId: number;
  projectId: number;
  changes: Partial<CohortFields> & { deleted?: boolean };
  /** persons (uuids) added to a static cohort (a CSV upload) */
  addPersonUuids?: readonly string[];
}>;
export type CohortCommand = CreateCohort | PatchCohort;

/** Persons per CohortPersonsAdded event: keeps each event small. */
export const PERSONS_PER_EVENT = 10_000;

const fieldNames = ['name', 'description', 'filters'] as const;

/** Create once; a patch records only what changes; `deleted: true` soft-deletes (for good). */
function decide(command: CohortCommand, state: CohortState): CohortEvent[] | DomainError {
  return match(command)
    .with({ type: 'CreateCohort' }, (c): CohortEvent[] => {
      if (state.status === 'present') return [];
      const created: CohortEvent = {
        type: 'CohortCreated',
        data: {
          cohortId: c.cohortId,
          projectId: c.projectId,
          fields: c.fields,
          createdAt: c.createdAt,
          createdByUserId: c.createdByUserId,
          ...(c.staticPersonUuids ? { isStatic: true } : {}),
        },
      };
      const uuids = c.staticPersonUuids ?? [];
      const added: CohortEvent[] = [];
      for (let i = 0; i < uuids.length; i += PERSONS_PER_EVENT)
        added.push({
          type: 'CohortPersonsAdded',
          data: {
            cohortId: c.cohortId,
            projectId: c.projectId,
            personUuids: uuids.slice(i, i + PERSONS_PER_EVENT),
          },
        });
      return [created, ...added];
    })
    .with({ type: 'PatchCohort' }, (c): CohortEvent[] | DomainError => {
      if (state.status === 'absent' || state.projectId !== c.projectId || state.deleted)
        return notFound();
      const changes: Partial<CohortFields> = {};
      for (const name of fieldNames) {
        const value = c.changes[name];
        if (value !== undefined && !isDeepStrictEqual(value, state.fields[name]))
          Object.assign(changes, { [name]: value });
      }
      const events: CohortEvent[] = [];
      const added = c.addPersonUuids ?? [];
      if (added.length > 0 && !state.isStatic)
        return invalidInput('Only a static cohort takes persons from a CSV file.', 'csv');
      for (let i = 0; i < added.length; i += PERSONS_PER_EVENT)
        events.push({
          type: 'CohortPersonsAdded',
          data: {
            cohortId: c.cohortId,
            projectId: c.projectId,
            personUuids: added.slice(i, i + PERSONS_PER_EVENT),
          },
        });
      if (Object.keys(changes).length > 0)
        events.push({ type: 'CohortUpdated', data: { cohortId: c.cohortId, changes } });
      if (c.changes.deleted === true)
        events.push({ type: 'CohortSoftDeleted', data: { cohortId: c.cohortId } });
      return events;
    })
    .exhaustive();
}

export const cohortDecider: Decider<CohortState, CohortCommand, CohortEvent> = {
  initialState: initialCohortState,
  evolve: evolveCohort,
  decide,
};
