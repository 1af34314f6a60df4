import { parse } from 'csv-parse/sync';
import { cohortsProjection } from '../../projections/cohorts/cohortsProjection.ts';
import type { personBatchesReader } from '../../projections/persons/personBatchesReader.ts';
import { nextId } from '../../src/appContext.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import { fail, invalidInput, tooLarge } from '../../src/core/errors.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { cohortDecider } from './cohortDecider.ts';
import type { CohortDeps } from './cohortDeps.ts';
import { type CohortFields, cohortStream } from './model/cohort.ts';

/** Most distinct ids one CSV upload may name (past it: 413). */
export const MAX_CSV_DISTINCT_IDS = 100_000;

export type StaticCohortDeps = CohortDeps &
  Readonly<{ persons: Pick<ReturnType<typeof personBatchesReader>, 'uuidsForDistinctIds'> }>;

/**
 * The distinct ids of an uploaded CSV, as PostHog reads it: the first column of every row, a
 * header cell `distinct_id` skipped, blanks left out, each id once.
 */
export function distinctIdsOfCsv(csv: string): string[] {
  let rows: string[][];
  try {
    rows = parse(csv, { relax_column_count: true, skip_empty_lines: true, bom: true });
  } catch (error) {
    return fail(invalidInput(`The CSV file could not be read: ${(error as Error).message}`, 'csv'));
  }
  const ids = new Set<string>();
  for (const [i, row] of rows.entries()) {
    const id = row[0]?.trim() ?? '';
    if (id === '' || (i === 0 && id.toLowerCase() === 'distinct_id')) continue;
    ids.add(id);
    if (ids.size > MAX_CSV_DISTINCT_IDS)
      fail(tooLarge(`The CSV file names more than ${MAX_CSV_DISTINCT_IDS} distinct ids.`));
  }
  return [...ids];
}

/** A static cohort of the persons of these distinct ids (ids no person has are left out). */
export async function createStaticCohort(
  deps: StaticCohortDeps,
  input: { projectId: number; userId: number | null; fields: CohortFields; distinctIds: string[] },
  metadata: EventMetadata,
): Promise<{ cohortId: number }> {
  const uuids = await deps.persons.uuidsForDistinctIds(input.projectId, input.distinctIds);
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
      staticPersonUuids: uuids,
    },
    metadata,
  );
  await deps.awaitProjection(cohortsProjection, handled.position);
  return { cohortId };
}

/** Adds the persons of these distinct ids to a static cohort (a PATCH with a CSV file). */
export async function addToStaticCohort(
  deps: StaticCohortDeps,
  input: { cohortId: number; projectId: number; distinctIds: string[] },
  metadata: EventMetadata,
): Promise<void> {
  const uuids = await deps.persons.uuidsForDistinctIds(input.projectId, input.distinctIds);
  const handled = await handleCommand(
    deps.store,
    cohortStream(input.cohortId),
    cohortDecider,
    {
      type: 'PatchCohort',
      cohortId: input.cohortId,
      projectId: input.projectId,
      changes: {},
      addPersonUuids: uuids,
    },
    metadata,
  );
  await deps.awaitProjection(cohortsProjection, handled.position);
}
