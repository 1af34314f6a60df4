import { accessProjection } from '../../projections/access/accessProjection.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import { fail } from '../../src/core/errors.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import type { AccessDeps } from './accessDeps.ts';
import { personalApiKeyStream } from './model/accessEvents.ts';
import { personalApiKeyDecider } from './personalApiKeyDecider.ts';
import { checkGrant, type KeyGranter } from './personalApiKeyGrants.ts';

export type UpdatePersonalApiKeyDeps = Pick<AccessDeps, 'store' | 'now' | 'awaitProjection'>;

/** PATCH personal_api_keys/:id/: label, scopes and projects; what is left out stays. */
export async function updatePersonalApiKey(
  deps: UpdatePersonalApiKeyDeps,
  granter: KeyGranter,
  keyId: string,
  patch: { label?: string; scopes?: string[]; scopedProjectIds?: number[] | null },
  metadata: EventMetadata,
): Promise<void> {
  const refused = checkGrant(granter, patch.scopes, patch.scopedProjectIds);
  if (refused) fail(refused);
  const result = await handleCommand(
    deps.store,
    personalApiKeyStream(keyId),
    personalApiKeyDecider,
    {
      type: 'UpdatePersonalApiKey',
      byUserId: granter?.userId ?? null,
      data: { keyId, ...patch, updatedAt: deps.now().toISOString() },
    },
    metadata,
  );
  await deps.awaitProjection(accessProjection, result.position);
}
