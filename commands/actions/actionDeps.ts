import type { AppContext } from '../../src/appContext.ts';

/** What the action handlers need from the composition root. */
export type ActionDeps = Pick<AppContext, 'store' | 'pool' | 'now' | 'awaitProjection'>;
export const actionDeps = (ctx: AppContext): ActionDeps => ctx;
