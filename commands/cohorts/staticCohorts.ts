import { finished } from 'node:stream/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parse } from 'csv-parse';
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

/** Most characters between two line breaks of an uploaded CSV (past it: 400). */
export const MAX_CSV_LINE_CHARS = 10_000;
/** Most rows one CSV upload may hold, blank and repeated ones included (past it: 413). */
export const MAX_CSV_ROWS = 1_000_000;
/**
 * Characters handed to the parser between two turns of the event loop: csv-parse needs ≈ 4 µs a
 * row, so a chunk of 2-character rows costs a few ms.
 */
const CSV_CHUNK_CHARS = 4_096;

const unreadable = (detail: string) =>
  fail(invalidInput(`The CSV file could not be read: ${detail}`, 'csv'));

/** Longest run of characters without a line break in `text`, continuing a run of `carried`. */
function lineRun(text: string, carried: number): { longest: number; open: number } {
  const last = text.lastIndexOf('\n');
  if (last < 0) return { longest: carried + text.length, open: carried + text.length };
  let longest = carried + text.indexOf('\n');
  for (let from = 0, at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) {
    longest = Math.max(longest, at - from + (from === 0 ? carried : 0));
    from = at + 1;
  }
  return { longest: Math.max(longest, text.length - last - 1), open: text.length - last - 1 };
}

/**
 * The distinct ids of an uploaded CSV, as PostHog reads it: the first column of every row, a
 * header cell `distinct_id` skipped, blanks left out, each id once. Parsed in chunks that give
 * the event loop back between them (10 MB in one synchronous parse stalled the server for 10 s),
 * with a line length bound (a line of millions of commas is millions of fields) and a row bound.
 */
export async function distinctIdsOfCsv(csv: string): Promise<string[]> {
  const ids = new Set<string>();
  let rows = 0;
  let problem: unknown;
  const parser = parse({ relax_column_count: true, skip_empty_lines: true, bom: true });
  parser.on('data', (row: string[]) => {
    const id = row[0]?.trim() ?? '';
    rows++;
    if (id === '' || (rows === 1 && id.toLowerCase() === 'distinct_id')) return;
    ids.add(id);
  });
  parser.on('error', (error) => {
    problem ??= error;
  });
  let open = 0;
  for (let at = 0; at < csv.length && problem === undefined; at += CSV_CHUNK_CHARS) {
    const chunk = csv.slice(at, at + CSV_CHUNK_CHARS);
    const run = lineRun(chunk, open);
    if (run.longest > MAX_CSV_LINE_CHARS)
      unreadable(`a line is longer than ${MAX_CSV_LINE_CHARS} characters.`);
    open = run.open;
    parser.write(chunk);
    if (rows > MAX_CSV_ROWS) fail(tooLarge(`The CSV file has more than ${MAX_CSV_ROWS} rows.`));
    if (ids.size > MAX_CSV_DISTINCT_IDS)
      fail(tooLarge(`The CSV file names more than ${MAX_CSV_DISTINCT_IDS} distinct ids.`));
    await nextTurn();
  }
  if (problem === undefined) {
    parser.end();
    await finished(parser).catch((error: unknown) => {
      problem ??= error;
    });
  }
  if (problem !== undefined) unreadable((problem as Error).message);
  // Records reach `data` as the stream flows, some after the last write: counted again here.
  if (rows > MAX_CSV_ROWS) fail(tooLarge(`The CSV file has more than ${MAX_CSV_ROWS} rows.`));
  if (ids.size > MAX_CSV_DISTINCT_IDS)
    fail(tooLarge(`The CSV file names more than ${MAX_CSV_DISTINCT_IDS} distinct ids.`));
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
