import { type Schedule, schedule } from '../../src/processing/schedule.ts';
import {
  type CohortCalculationDeps,
  calculateCohort,
  calculateDueCohorts,
} from './cohortCalculation.ts';

export type CohortCalculations = Readonly<{
  /** recalculate this cohort soon (after the ones asked before; a repeat waiting is merged) */
  request(projectId: number, cohortId: number): void;
  stop(): Promise<void>;
}>;

/**
 * The cohort calculations of a running server: the ones asked for (a dynamic cohort created or
 * changed), one at a time in order, and on `pattern` every cohort whose last calculation is older
 * than `maxAgeMs` (never calculated ones included, so a restart loses none).
 */
export function cohortCalculations(
  deps: CohortCalculationDeps,
  pattern: string,
  maxAgeMs: number,
  log: (message: string) => void,
): CohortCalculations {
  const waiting = new Map<number, number>();
  let chain: Promise<unknown> = Promise.resolve();
  /** one calculation at a time; a failure does not stop the ones after it */
  const enqueue = (task: () => Promise<unknown>) => {
    const run = chain.then(task);
    chain = run.catch(() => undefined);
    return run;
  };
  const due: Schedule = schedule(
    'cohort calculation',
    pattern,
    () => enqueue(() => calculateDueCohorts(deps, maxAgeMs)),
    log,
  );
  return {
    request(projectId, cohortId) {
      if (waiting.has(cohortId)) return;
      waiting.set(cohortId, projectId);
      enqueue(() => {
        waiting.delete(cohortId);
        return calculateCohort(deps, projectId, cohortId);
      }).catch((error: unknown) =>
        log(
          `cohort ${cohortId} calculation failed: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
    },
    async stop() {
      await due.stop();
      await chain;
    },
  };
}
