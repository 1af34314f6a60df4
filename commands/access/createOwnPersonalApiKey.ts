import { domainError, fail } from '../../src/core/errors.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import type { AccessDeps } from './accessDeps.ts';
import { createPersonalApiKey } from './createPersonalApiKey.ts';
import {
  checkGrant,
  type KeyGranter,
  MAX_PERSONAL_API_KEYS_PER_USER,
} from './personalApiKeyGrants.ts';

export type CreateOwnPersonalApiKeyDeps = Pick<
  AccessDeps,
  'store' | 'now' | 'awaitProjection' | 'uuid' | 'access'
>;

/**
 * POST personal_api_keys/: a key of the calling user, at most PostHog's ten a user, holding no
 * more than the caller's own key (see checkGrant). The value is returned once.
 */
export async function createOwnPersonalApiKey(
  deps: CreateOwnPersonalApiKeyDeps,
  granter: NonNullable<KeyGranter>,
  input: { label: string; scopes: string[]; scopedProjectIds: number[] | null },
  metadata: EventMetadata,
): Promise<{ keyId: string; personalApiKey: string }> {
  const refused = checkGrant(granter, input.scopes, input.scopedProjectIds);
  if (refused) fail(refused);
  if ((await deps.access.personalKeyCount(granter.userId)) >= MAX_PERSONAL_API_KEYS_PER_USER)
    fail(
      domainError(
        'validation',
        'invalid_input',
        `You can only have ${MAX_PERSONAL_API_KEYS_PER_USER} personal API keys. Remove an existing key before creating a new one.`,
      ),
    );
  return createPersonalApiKey(deps, { userId: granter.userId, ...input }, metadata);
}
