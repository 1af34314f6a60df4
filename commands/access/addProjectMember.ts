import { accessProjection } from '../../projections/access/accessProjection.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import { projectDecider } from './accessDeciders.ts';
import { type AccessDeps, accessMetadata } from './accessDeps.ts';
import { projectStream } from './model/accessEvents.ts';

export type AddProjectMemberDeps = Pick<AccessDeps, 'store' | 'now' | 'awaitProjection'>;
/** level: ACCESS_LEVEL (1 member, 8 admin, 15 owner) */
export type AddProjectMemberInput = { projectId: number; userId: number; level: number };

/** Makes the user a member of the project; a member already is one (nothing is appended). */
export async function addProjectMember(
  deps: AddProjectMemberDeps,
  input: AddProjectMemberInput,
): Promise<void> {
  const result = await handleCommand(
    deps.store,
    projectStream(input.projectId),
    projectDecider,
    {
      type: 'AddProjectMember',
      data: input,
    },
    accessMetadata(deps.now(), undefined, input.projectId),
  );
  await deps.awaitProjection(accessProjection, result.position);
}
