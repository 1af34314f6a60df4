import { type AccessReader, accessReader } from '../../projections/access/accessReader.ts';
import {
  type FeatureFlagsReader,
  featureFlagsReader,
} from '../../projections/featureFlags/featureFlagsReader.ts';
import type { AppContext } from '../../src/appContext.ts';

/**
 * What the flag use cases need: the log, the pool (id sequences and the key lock), the clock, the
 * read-your-writes wait, and the readers they look up facts in (flags; callers' roles and roles).
 */
export type FeatureFlagDeps = Pick<AppContext, 'store' | 'pool' | 'now' | 'awaitProjection'> &
  Readonly<{ flags: FeatureFlagsReader; access: AccessReader }>;

/** One call wires every flag handler, for routes, the CLI and tests alike. */
export const featureFlagDeps = (ctx: AppContext): FeatureFlagDeps => ({
  store: ctx.store,
  pool: ctx.pool,
  now: ctx.now,
  awaitProjection: ctx.awaitProjection,
  flags: featureFlagsReader(ctx.pool),
  access: accessReader(ctx.pool),
});
