import { cohortsProjection } from '../../projections/cohorts/cohortsProjection.ts';
import { cohortsReader } from '../../projections/cohorts/cohortsReader.ts';
import { awaitNewest } from '../../src/appContext.ts';
import { type Schedule, schedule } from '../../src/processing/schedule.ts';
import { type CohortCalculationDeps, calculateCohort } from './cohortCalculation.ts';

/**
 * Calculations running at once over all projects (each project runs one at a time, so a project
 * with many heavy cohorts holds one slot and another project's cohort takes the next).
 */
export const COHORT_CALCULATIONS_AT_ONCE = 2;

export type CohortCalculations = Readonly<{
  /** recalculate this cohort soon (after its project's earlier ones; a repeat waiting is merged) */
  request(projectId: number, cohortId: number): void;
  /** resolves when nothing is waiting or running */
  idle(): Promise<void>;
  stop(): Promise<void>;
}>;

/**
 * The cohort calculations of a running server: the ones asked for (a dynamic cohort created or
 * changed), on `pattern` every cohort whose last calculation is older than `maxAgeMs` (never
 * calculated ones included, so a restart loses none), and at start the ones a stopped process
 * left calculating. Each project has its own queue; projects take turns (round robin) for at
 * most `atOnce` running calculations, so one project's heavy cohorts do not hold another's.
 */
export function cohortCalculations(
  deps: CohortCalculationDeps,
  pattern: string,
  maxAgeMs: number,
  log: (message: string) => void,
  atOnce = COHORT_CALCULATIONS_AT_ONCE,
): CohortCalculations {
  /** project → its waiting cohort ids in order; Map order is the projects' turn */
  const waiting = new Map<number, number[]>();
  const queued = new Set<number>();
  const busyProjects = new Set<number>();
  const running = new Set<Promise<void>>();

  const start = () => {
    while (running.size < atOnce) {
      const projectId = [...waiting.keys()].find((p) => !busyProjects.has(p));
      if (projectId === undefined) return;
      const ids = waiting.get(projectId)!;
      const cohortId = ids.shift()!;
      // Taken out and put back at the end: the next turn is another project's.
      waiting.delete(projectId);
      if (ids.length > 0) waiting.set(projectId, ids);
      queued.delete(cohortId);
      busyProjects.add(projectId);
      const run: Promise<void> = calculateCohort(deps, projectId, cohortId)
        .then(
          () => undefined,
          (error: unknown) =>
            log(
              `cohort ${cohortId} calculation failed: ${error instanceof Error ? error.message : String(error)}`,
            ),
        )
        .finally(() => {
          busyProjects.delete(projectId);
          running.delete(run);
          start();
        });
      running.add(run);
    }
  };

  const request = (projectId: number, cohortId: number) => {
    if (queued.has(cohortId)) return;
    queued.add(cohortId);
    waiting.set(projectId, [...(waiting.get(projectId) ?? []), cohortId]);
    start();
  };

  const idle = async () => {
    while (running.size > 0) await Promise.all(running);
  };

  const reader = cohortsReader(deps.pool);
  const due: Schedule = schedule(
    'cohort calculation',
    pattern,
    async () => {
      const before = new Date(deps.now().getTime() - maxAgeMs);
      for (const c of await reader.dueForCalculation(before)) request(c.project_id, c.id);
      await idle();
    },
    log,
  );
  // A calculation a stopped process left running (kill -9) is not left `is_calculating` with the
  // old members until the next due sweep: it is requeued once the read model shows the log.
  const resumed = (async () => {
    await awaitNewest(deps, { eventTypes: ['CohortCalculationStarted'] }, cohortsProjection);
    for (const c of await reader.interruptedCalculations()) request(c.project_id, c.id);
  })().catch((error: unknown) =>
    log(
      `resuming interrupted cohort calculations failed: ${error instanceof Error ? error.message : String(error)}`,
    ),
  );

  return {
    request,
    idle,
    async stop() {
      await due.stop();
      await resumed;
      await idle();
    },
  };
}
