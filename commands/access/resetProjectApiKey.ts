import { accessProjection } from '../../projections/access/accessProjection.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import { domainError, fail } from '../../src/core/errors.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { generateKey, hashKey, maskKey } from '../../src/core/keys.ts';
import { projectDecider } from './accessDeciders.ts';
import type { AccessDeps } from './accessDeps.ts';
import { ACCESS_LEVEL, projectStream } from './model/accessEvents.ts';

export type ResetProjectApiKeyDeps = Pick<AccessDeps, 'store' | 'now' | 'awaitProjection'> &
  Readonly<{
    /** empties this process's token → project caches (capture's and /decide's) */
    forgetCachedProjectKeys: () => void;
  }>;

/**
 * reset_token: a new project API key, returned once (only its hash is kept). PostHog lets only an
 * admin or the owner do it; `callerLevel` null is the operator at the CLI. It returns once the
 * access read model holds the new hash and this process's caches have forgotten the old key, so
 * capture and /decide refuse the old key from the next request on.
 */
export async function resetProjectApiKey(
  deps: ResetProjectApiKeyDeps,
  projectId: number,
  callerLevel: number | null,
  metadata: EventMetadata,
): Promise<{ projectApiKey: string }> {
  if (callerLevel !== null && callerLevel < ACCESS_LEVEL.admin)
    fail(
      domainError(
        'forbidden',
        'permission_denied',
        'Only a project admin or owner can reset the project API key.',
      ),
    );
  const projectApiKey = generateKey('phc');
  const result = await handleCommand(
    deps.store,
    projectStream(projectId),
    projectDecider,
    {
      type: 'ResetProjectApiKey',
      data: {
        projectId,
        apiKeyHash: hashKey(projectApiKey),
        apiKeyMask: maskKey(projectApiKey),
        resetAt: deps.now().toISOString(),
      },
    },
    metadata,
  );
  await deps.awaitProjection(accessProjection, result.position);
  deps.forgetCachedProjectKeys();
  return { projectApiKey };
}
