import { cohortsProjection } from '../../projections/cohorts/cohortsProjection.ts';
import { nextId } from '../../src/appContext.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { cohortDecider } from './cohortDecider.ts';
import type { CohortDeps } from './cohortDeps.ts';
import { assertCohortsOfProject } from './cohortReferences.ts';
import { type CohortFields, cohortStream } from './model/cohort.ts';

/** Creates a dynamic cohort and returns once the cohorts read model shows it. */
export async function createCohort(
  deps: CohortDeps,
  input: { projectId: number; userId: number | null; fields: CohortFields },
  metadata: EventMetadata,
): Promise<{ cohortId: number }> {
  await assertCohortsOfProject(deps.pool, input.projectId, input.fields.filters.properties);
  const cohortId = await nextId(deps.pool, 'cohort');
  const handled = await handleCommand(
    deps.store,
    cohortStream(cohortId),
    cohortDecider,
    {
      type: 'CreateCohort',
      cohortId,
      projectId: input.projectId,
      fields: input.fields,
      createdAt: deps.now().toISOString(),
      createdByUserId: input.userId,
    },
    metadata,
  );
  await deps.awaitProjection(cohortsProjection, handled.position);
  return { cohortId };
}
