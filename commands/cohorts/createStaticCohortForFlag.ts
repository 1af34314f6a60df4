import { cohortsProjection } from '../../projections/cohorts/cohortsProjection.ts';
import { evaluateFlags } from '../../projections/featureFlags/evaluation/evaluateFlags.ts';
import type { FlagDefinitions } from '../../projections/featureFlags/flagDefinitions.ts';
import type { personBatchesReader } from '../../projections/persons/personBatchesReader.ts';
import { nextId } from '../../src/appContext.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import { fail, invalidInput, notFound, tooLarge } from '../../src/core/errors.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { cohortDecider } from './cohortDecider.ts';
import type { CohortDeps } from './cohortDeps.ts';
import { cohortStream } from './model/cohort.ts';

export type StaticCohortForFlagDeps = CohortDeps &
  Readonly<{
    definitions: Pick<FlagDefinitions, 'forProject'>;
    persons: ReturnType<typeof personBatchesReader>;
  }>;

/** Persons evaluated per read; the event loop is free between batches. */
const BATCH = 1_000;

/**
 * `create_static_cohort_for_flag`: a static cohort of every person for whom the flag is on now,
 * evaluated as /decide evaluates it (the person's first distinct id, its stored properties, the
 * project's cohorts; no request properties, no continuity overrides). Refused past `maxPersons`.
 */
export async function createStaticCohortForFlag(
  deps: StaticCohortForFlagDeps,
  input: { projectId: number; userId: number | null; flagId: number; maxPersons: number },
  metadata: EventMetadata,
): Promise<{ cohortId: number }> {
  const project = await deps.definitions.forProject(input.projectId);
  const flag = project.flags.find((f) => f.id === input.flagId) ?? fail(notFound());
  if ((flag.filters?.aggregation_group_type_index ?? null) !== null)
    fail(invalidInput('A static cohort holds persons: this flag targets groups.'));
  const members: string[] = [];
  const now = deps.now();
  let after = 0;
  let scanned = 0;
  for (;;) {
    const batch = await deps.persons.after(input.projectId, after, BATCH);
    if (batch.length === 0) break;
    scanned += batch.length;
    if (scanned > input.maxPersons)
      fail(tooLarge(`The project has more than ${input.maxPersons} persons to evaluate.`));
    for (const person of batch) {
      if (person.distinct_id === null) continue;
      const [result] = evaluateFlags(
        project.flags,
        {
          distinctId: person.distinct_id,
          person: { properties: person.properties, complete: true },
          groups: {},
          groupTypeMapping: project.groupTypeMapping,
          cohorts: project.cohorts,
          hashKeyOverrides: {},
        },
        { now: () => now, keys: [flag.key] },
      );
      if (result?.outcome === 'evaluated' && result.enabled) members.push(person.uuid);
    }
    after = batch.at(-1)!.id;
  }
  const cohortId = await nextId(deps.pool, 'cohort');
  const handled = await handleCommand(
    deps.store,
    cohortStream(cohortId),
    cohortDecider,
    {
      type: 'CreateCohort',
      cohortId,
      projectId: input.projectId,
      fields: {
        name: `Users with feature flag ${flag.key} enabled at ${now.toISOString()}`,
        description: '',
        filters: { properties: { type: 'AND', values: [] } },
      },
      createdAt: now.toISOString(),
      createdByUserId: input.userId,
      staticPersonUuids: members,
    },
    metadata,
  );
  await deps.awaitProjection(cohortsProjection, handled.position);
  return { cohortId };
}
