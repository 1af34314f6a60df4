import { featureFlagsProjection } from '../../projections/featureFlags/featureFlagsProjection.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { assertCohortsOfProject } from '../cohorts/cohortReferences.ts';
import { featureFlagDecider } from './featureFlagDecider.ts';
import type { FeatureFlagDeps } from './featureFlagDeps.ts';
import { withFlagKeyLock } from './flagKeyLock.ts';
import { type FlagEditor, loadFlagEditor } from './model/canEditFlag.ts';
import { type FlagFields, featureFlagStream } from './model/featureFlag.ts';

export type PatchFeatureFlagDeps = Pick<FeatureFlagDeps, 'store' | 'pool' | 'awaitProjection'> &
  Readonly<{
    flags: Pick<FeatureFlagDeps['flags'], 'get' | 'isKeyTaken'>;
    access: Pick<FeatureFlagDeps['access'], 'roleLevelsOf'>;
  }>;

/** The fields to change, as the API names them; `deleted` soft-deletes or restores. */
export type FeatureFlagPatch = { [F in keyof FlagFields]?: FlagFields[F] | undefined } & {
  deleted?: boolean | undefined;
  /** accepted and ignored: a flag keeps the creation time it was created with */
  created_at?: string | undefined;
};

export type PatchFeatureFlagInput = Readonly<{
  projectId: number;
  userId: number;
  /** the caller's membership level in the project (1 member, 8 admin, 15 owner) */
  projectLevel: number;
  flagId: number;
  patch: FeatureFlagPatch;
}>;

const pickFields = (patch: FeatureFlagPatch): Partial<FlagFields> =>
  Object.fromEntries(
    Object.entries(patch).filter(
      ([k, v]) => v !== undefined && k !== 'deleted' && k !== 'created_at',
    ),
  );

/**
 * Changes, soft-deletes or restores a flag (404 when the project has no such flag) and returns once
 * the flags read model shows it, with the caller as the editor it loaded.
 */
export async function patchFeatureFlag(
  deps: PatchFeatureFlagDeps,
  input: PatchFeatureFlagInput,
  metadata: EventMetadata,
): Promise<{ flagId: number; position: bigint | undefined; editor: FlagEditor }> {
  const { projectId, flagId, patch } = input;
  const editor = await loadFlagEditor(deps.access, input.userId, input.projectLevel);
  const current = await deps.flags.get(projectId, flagId);
  if (!current) fail(notFound());
  if (patch.filters)
    await assertCohortsOfProject(deps.pool, projectId, [
      patch.filters.groups,
      patch.filters.super_groups,
    ]);
  const changes = {
    ...pickFields(patch),
    ...(patch.deleted !== undefined ? { deleted: patch.deleted } : {}),
  };
  const key = (patch.key ?? current.key).trim();
  const decide = async () => {
    const handled = await handleCommand(
      deps.store,
      featureFlagStream(flagId),
      featureFlagDecider,
      {
        type: 'PatchFeatureFlag',
        projectId,
        changes,
        editor,
        keyTaken: await deps.flags.isKeyTaken(projectId, key, flagId),
      },
      metadata,
    );
    await deps.awaitProjection(featureFlagsProjection, handled.position);
    return handled;
  };
  // A rename or a restore claims a key: it runs under that key's lock, like a create.
  const claimsKey = patch.key !== undefined || patch.deleted === false;
  const result = claimsKey
    ? await withFlagKeyLock(deps.pool, projectId, key, decide)
    : await decide();
  return { flagId, position: result.position, editor };
}
