import type { AppContext } from '../../src/appContext.ts';

/** What the cohort handlers need from the composition root. */
export type CohortDeps = Pick<AppContext, 'store' | 'pool' | 'now' | 'awaitProjection'>;
export const cohortDeps = (ctx: AppContext): CohortDeps => ctx;
