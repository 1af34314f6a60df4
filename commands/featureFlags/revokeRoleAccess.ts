import { featureFlagsProjection } from '../../projections/featureFlags/featureFlagsProjection.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { featureFlagDecider } from './featureFlagDecider.ts';
import type { FeatureFlagDeps } from './featureFlagDeps.ts';
import { loadFlagEditor } from './model/canEditFlag.ts';
import { featureFlagStream } from './model/featureFlag.ts';

export type RevokeRoleAccessDeps = Pick<FeatureFlagDeps, 'store' | 'awaitProjection'> &
  Readonly<{ access: Pick<FeatureFlagDeps['access'], 'roleLevelsOf'> }>;

export type RevokeRoleAccessInput = Readonly<{
  projectId: number;
  userId: number;
  /** the caller's membership level in the project (1 member, 8 admin, 15 owner) */
  projectLevel: number;
  flagId: number;
  roleAccessId: number;
}>;

/** Removes a role access entry from a flag and returns once the flags read model shows it. */
export async function revokeRoleAccess(
  deps: RevokeRoleAccessDeps,
  input: RevokeRoleAccessInput,
  metadata: EventMetadata,
): Promise<{ position: bigint | undefined }> {
  const editor = await loadFlagEditor(deps.access, input.userId, input.projectLevel);
  const result = await handleCommand(
    deps.store,
    featureFlagStream(input.flagId),
    featureFlagDecider,
    {
      type: 'RevokeRoleAccess',
      projectId: input.projectId,
      roleAccessId: input.roleAccessId,
      editor,
    },
    metadata,
  );
  await deps.awaitProjection(featureFlagsProjection, result.position);
  return { position: result.position };
}
