import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import { generateKey, hashKey, maskKey } from '../../src/core/keys.ts';
import { projectDecider } from './accessDeciders.ts';
import { type AccessDeps, accessMetadata } from './accessDeps.ts';
import { addProjectMember } from './addProjectMember.ts';
import { ACCESS_LEVEL, projectStream } from './model/accessEvents.ts';

export type CreateProjectDeps = Pick<AccessDeps, 'store' | 'now' | 'awaitProjection' | 'nextId'>;
/** projectApiKey: the raw key to use (INIT_PROJECT_API_KEY); a new one is generated when absent */
export type CreateProjectInput = { name: string; ownerUserId: number; projectApiKey?: string };

/**
 * A project owned by `ownerUserId`. The raw project API key is returned once: only its hash and
 * mask are stored.
 */
export async function createProject(
  deps: CreateProjectDeps,
  input: CreateProjectInput,
): Promise<{ projectId: number; projectApiKey: string }> {
  const projectId = await deps.nextId('project');
  const projectApiKey = input.projectApiKey ?? generateKey('phc');
  const now = deps.now();
  await handleCommand(
    deps.store,
    projectStream(projectId),
    projectDecider,
    {
      type: 'CreateProject',
      data: {
        projectId,
        name: input.name,
        apiKeyHash: hashKey(projectApiKey),
        apiKeyMask: maskKey(projectApiKey),
        createdByUserId: input.ownerUserId,
        createdAt: now.toISOString(),
      },
    },
    accessMetadata(now, input.ownerUserId, projectId),
  );
  // Waits for the read model: the membership is the project's last event.
  await addProjectMember(deps, { projectId, userId: input.ownerUserId, level: ACCESS_LEVEL.owner });
  return { projectId, projectApiKey };
}
