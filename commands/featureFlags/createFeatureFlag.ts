import { featureFlagsProjection } from '../../projections/featureFlags/featureFlagsProjection.ts';
import { nextId } from '../../src/appContext.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { assertCohortsOfProject } from '../cohorts/cohortReferences.ts';
import { featureFlagDecider } from './featureFlagDecider.ts';
import type { FeatureFlagDeps } from './featureFlagDeps.ts';
import { withFlagKeyLock } from './flagKeyLock.ts';
import { type FlagFields, featureFlagStream } from './model/featureFlag.ts';
import { normalizeFlagFilters } from './model/flagFilters.ts';

export type CreateFeatureFlagDeps = Pick<
  FeatureFlagDeps,
  'store' | 'pool' | 'now' | 'awaitProjection'
> &
  Readonly<{ flags: Pick<FeatureFlagDeps['flags'], 'isKeyTaken'> }>;

/** A new flag as the API names its fields; what is left out gets PostHog's default. */
export type NewFeatureFlag = { [F in keyof FlagFields]?: FlagFields[F] | undefined } & {
  key: string;
  deleted?: boolean | undefined;
  /** ISO date-time; the time of the request when absent */
  created_at?: string | undefined;
};

export type CreateFeatureFlagInput = Readonly<{
  projectId: number;
  userId: number;
  flag: NewFeatureFlag;
}>;

/**
 * Creates a flag: draws its id, checks its key is free and appends `FeatureFlagCreated`, all under
 * the key's lock, and returns once the flags read model shows it.
 */
export async function createFeatureFlag(
  deps: CreateFeatureFlagDeps,
  input: CreateFeatureFlagInput,
  metadata: EventMetadata,
): Promise<{ flagId: number; position: bigint | undefined }> {
  const { projectId, userId, flag } = input;
  if (flag.filters)
    await assertCohortsOfProject(deps.pool, projectId, [
      flag.filters.groups,
      flag.filters.super_groups,
    ]);
  const flagId = await nextId(deps.pool, 'feature_flag');
  const fields: FlagFields = {
    name: flag.name ?? '',
    key: flag.key,
    filters: flag.filters ?? normalizeFlagFilters(undefined),
    active: flag.active ?? true,
    ensure_experience_continuity: flag.ensure_experience_continuity ?? false,
    rollback_conditions: flag.rollback_conditions ?? null,
    performed_rollback: flag.performed_rollback ?? false,
    tags: flag.tags ?? [],
    analytics_dashboards: flag.analytics_dashboards ?? [],
    has_enriched_analytics: flag.has_enriched_analytics ?? false,
  };
  const key = flag.key.trim();
  // The uniqueness check, the append and its projection happen under the key's lock.
  return withFlagKeyLock(deps.pool, projectId, key, async () => {
    const handled = await handleCommand(
      deps.store,
      featureFlagStream(flagId),
      featureFlagDecider,
      {
        type: 'CreateFeatureFlag',
        flagId,
        projectId,
        fields,
        deleted: flag.deleted ?? false,
        createdAt: flag.created_at
          ? new Date(flag.created_at).toISOString()
          : deps.now().toISOString(),
        createdByUserId: userId,
        keyTaken: await deps.flags.isKeyTaken(projectId, key),
      },
      metadata,
    );
    await deps.awaitProjection(featureFlagsProjection, handled.position);
    return { flagId, position: handled.position };
  });
}
