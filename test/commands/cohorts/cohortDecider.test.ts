import { describe, expect, it } from 'vitest';
import { cohortDecider } from '../../../commands/cohorts/cohortDecider.ts';
import type { CohortCreated, CohortFields } from '../../../commands/cohorts/model/cohort.ts';
import { DeciderSpecification } from '../../support/deciderSpec.ts';

const given = DeciderSpecification.for(cohortDecider);
const fields: CohortFields = {
  name: 'Acme',
  description: '',
  filters: { properties: { type: 'AND', values: [{ key: 'email', type: 'person', value: 'x' }] } },
};
const created: CohortCreated = {
  type: 'CohortCreated',
  data: {
    cohortId: 7,
    projectId: 1,
    fields,
    createdAt: '2026-11-24T00:00:00.000Z',
    createdByUserId: 3,
  },
};
const patch = (changes: Record<string, unknown>, projectId = 1) =>
  ({ type: 'PatchCohort', cohortId: 7, projectId, changes }) as const;

describe('cohortDecider', () => {
  it('creates once', () => {
    const create = {
      type: 'CreateCohort',
      cohortId: 7,
      projectId: 1,
      fields,
      createdAt: '2026-11-24T00:00:00.000Z',
      createdByUserId: 3,
    } as const;
    given([]).when(create).then([created]);
    given([created]).when(create).thenNothing();
  });

  it('creates a static cohort with its persons, in events of at most 10,000', () => {
    const uuids = Array.from(
      { length: 10_001 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    const outcome = given([])
      .when({
        type: 'CreateCohort',
        cohortId: 7,
        projectId: 1,
        fields,
        createdAt: '2026-11-24T00:00:00.000Z',
        createdByUserId: 3,
        staticPersonUuids: uuids,
      })
      .outcome();
    if (!Array.isArray(outcome)) throw new Error('expected events');
    expect(outcome.map((e) => e.type)).toEqual([
      'CohortCreated',
      'CohortPersonsAdded',
      'CohortPersonsAdded',
    ]);
    expect(outcome[0]!.data).toMatchObject({ isStatic: true });
    expect(
      outcome.slice(1).flatMap((e) => (e.data as { personUuids: string[] }).personUuids),
    ).toEqual(uuids);
  });

  it('records only the fields that change, then the soft delete', () => {
    given([created])
      .when(patch({ name: 'Acme Inc', description: '' }))
      .then([{ type: 'CohortUpdated', data: { cohortId: 7, changes: { name: 'Acme Inc' } } }]);
    given([created])
      .when(patch({ name: 'Acme' }))
      .thenNothing();
    given([created])
      .when(patch({ deleted: true }))
      .then([{ type: 'CohortSoftDeleted', data: { cohortId: 7 } }]);
  });

  it('refuses an absent cohort, another project’s, and a deleted one', () => {
    given([])
      .when(patch({ name: 'x' }))
      .thenFails({ kind: 'not_found' });
    given([created])
      .when(patch({ name: 'x' }, 2))
      .thenFails({ kind: 'not_found' });
    given([created, { type: 'CohortSoftDeleted', data: { cohortId: 7 } }])
      .when(patch({ name: 'x' }))
      .thenFails({ kind: 'not_found' });
  });
});
