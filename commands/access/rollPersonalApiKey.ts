import { accessProjection } from '../../projections/access/accessProjection.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { generateKey, hashKey, maskKey } from '../../src/core/keys.ts';
import type { AccessDeps } from './accessDeps.ts';
import { personalApiKeyStream } from './model/accessEvents.ts';
import { personalApiKeyDecider } from './personalApiKeyDecider.ts';

export type RollPersonalApiKeyDeps = Pick<AccessDeps, 'store' | 'now' | 'awaitProjection'>;

/**
 * A new value for the key (same id, label and scopes), returned once. It returns after the
 * access read model has applied the roll, so the old value is refused by the next request.
 * `byUserId`: the key's holder through the API; null: the operator at the CLI.
 */
export async function rollPersonalApiKey(
  deps: RollPersonalApiKeyDeps,
  byUserId: number | null,
  keyId: string,
  metadata: EventMetadata,
): Promise<{ personalApiKey: string }> {
  const personalApiKey = generateKey('phx');
  const result = await handleCommand(
    deps.store,
    personalApiKeyStream(keyId),
    personalApiKeyDecider,
    {
      type: 'RollPersonalApiKey',
      byUserId,
      data: {
        keyId,
        secureValue: hashKey(personalApiKey),
        maskValue: maskKey(personalApiKey),
        rolledAt: deps.now().toISOString(),
      },
    },
    metadata,
  );
  await deps.awaitProjection(accessProjection, result.position);
  return { personalApiKey };
}
