import { featureFlagsProjection } from '../../projections/featureFlags/featureFlagsProjection.ts';
import { nextId } from '../../src/appContext.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { featureFlagDecider } from './featureFlagDecider.ts';
import type { FeatureFlagDeps } from './featureFlagDeps.ts';
import { type FlagEditor, loadFlagEditor } from './model/canEditFlag.ts';
import { featureFlagStream } from './model/featureFlag.ts';

export type GrantRoleAccessDeps = Pick<
  FeatureFlagDeps,
  'store' | 'pool' | 'now' | 'awaitProjection'
> &
  Readonly<{ access: Pick<FeatureFlagDeps['access'], 'roleLevelsOf' | 'roleExists'> }>;

export type GrantRoleAccessInput = Readonly<{
  projectId: number;
  userId: number;
  /** the caller's membership level in the project (1 member, 8 admin, 15 owner) */
  projectLevel: number;
  flagId: number;
  roleId: string;
}>;

/** Lists a role on a flag (a new role access entry) and returns once the flags read model shows it. */
export async function grantRoleAccess(
  deps: GrantRoleAccessDeps,
  input: GrantRoleAccessInput,
  metadata: EventMetadata,
): Promise<{ roleAccessId: number; position: bigint | undefined; editor: FlagEditor }> {
  const editor = await loadFlagEditor(deps.access, input.userId, input.projectLevel);
  const roleAccessId = await nextId(deps.pool, 'role_access');
  // One spelling per role: Postgres prints uuids in lower case, and the decider compares strings.
  const roleId = input.roleId.toLowerCase();
  const result = await handleCommand(
    deps.store,
    featureFlagStream(input.flagId),
    featureFlagDecider,
    {
      type: 'GrantRoleAccess',
      projectId: input.projectId,
      roleAccessId,
      roleId,
      roleExists: await deps.access.roleExists(roleId),
      editor,
      at: deps.now().toISOString(),
    },
    metadata,
  );
  await deps.awaitProjection(featureFlagsProjection, result.position);
  return { roleAccessId, position: result.position, editor };
}
