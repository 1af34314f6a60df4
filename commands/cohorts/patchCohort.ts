import { cohortsProjection } from '../../projections/cohorts/cohortsProjection.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { cohortDecider, type PatchCohort } from './cohortDecider.ts';
import type { CohortDeps } from './cohortDeps.ts';
import { assertCohortsOfProject } from './cohortReferences.ts';
import { cohortStream } from './model/cohort.ts';

/** Changes or soft-deletes a cohort (404 for another project's or a deleted one). */
export async function patchCohort(
  deps: CohortDeps,
  input: { cohortId: number; projectId: number; changes: PatchCohort['changes'] },
  metadata: EventMetadata,
): Promise<void> {
  if (input.changes.filters)
    await assertCohortsOfProject(deps.pool, input.projectId, input.changes.filters.properties);
  const handled = await handleCommand(
    deps.store,
    cohortStream(input.cohortId),
    cohortDecider,
    { type: 'PatchCohort', ...input },
    metadata,
  );
  await deps.awaitProjection(cohortsProjection, handled.position);
}
