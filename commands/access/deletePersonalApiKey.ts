import { accessProjection } from '../../projections/access/accessProjection.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import type { AccessDeps } from './accessDeps.ts';
import { personalApiKeyStream } from './model/accessEvents.ts';
import { personalApiKeyDecider } from './personalApiKeyDecider.ts';

export type DeletePersonalApiKeyDeps = Pick<AccessDeps, 'store' | 'now' | 'awaitProjection'>;

/**
 * Revokes the key. It returns after the access read model has dropped it, so the next request
 * with it is refused; the log keeps who revoked it and when. `byUserId`: the key's holder
 * through the API; null: the operator at the CLI.
 */
export async function deletePersonalApiKey(
  deps: DeletePersonalApiKeyDeps,
  byUserId: number | null,
  keyId: string,
  metadata: EventMetadata,
): Promise<void> {
  const result = await handleCommand(
    deps.store,
    personalApiKeyStream(keyId),
    personalApiKeyDecider,
    {
      type: 'DeletePersonalApiKey',
      byUserId,
      data: { keyId, deletedAt: deps.now().toISOString() },
    },
    metadata,
  );
  await deps.awaitProjection(accessProjection, result.position);
}
