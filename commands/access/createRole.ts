import { accessProjection } from '../../projections/access/accessProjection.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import { roleDecider } from './accessDeciders.ts';
import { type AccessDeps, accessMetadata } from './accessDeps.ts';
import { roleStream } from './model/accessEvents.ts';

export type CreateRoleDeps = Pick<AccessDeps, 'store' | 'now' | 'awaitProjection' | 'uuid'>;
export type CreateRoleInput = {
  name: string;
  /** 21 view, 37 edit */
  featureFlagsAccessLevel: number;
  memberUserIds: number[];
  createdByUserId: number | null;
};

/** A role (not tied to a project) with its members, one event each on the stream `role-<uuid>`. */
export async function createRole(
  deps: CreateRoleDeps,
  input: CreateRoleInput,
): Promise<{ roleId: string }> {
  const roleId = deps.uuid();
  const stream = roleStream(roleId);
  const metadata = () => accessMetadata(deps.now(), input.createdByUserId ?? undefined);
  let result = await handleCommand(
    deps.store,
    stream,
    roleDecider,
    {
      type: 'CreateRole',
      data: {
        roleId,
        name: input.name,
        featureFlagsAccessLevel: input.featureFlagsAccessLevel,
        createdByUserId: input.createdByUserId,
        createdAt: deps.now().toISOString(),
      },
    },
    metadata(),
  );
  for (const userId of input.memberUserIds) {
    result = await handleCommand(
      deps.store,
      stream,
      roleDecider,
      {
        type: 'AddRoleMember',
        data: { roleId, userId, addedAt: deps.now().toISOString() },
      },
      metadata(),
    );
  }
  await deps.awaitProjection(accessProjection, result.position);
  return { roleId };
}
