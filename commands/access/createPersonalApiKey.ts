import { accessProjection } from '../../projections/access/accessProjection.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { generateKey, hashKey, maskKey } from '../../src/core/keys.ts';
import { type AccessDeps, accessMetadata } from './accessDeps.ts';
import { personalApiKeyStream } from './model/accessEvents.ts';
import { personalApiKeyDecider } from './personalApiKeyDecider.ts';

export type CreatePersonalApiKeyDeps = Pick<
  AccessDeps,
  'store' | 'now' | 'awaitProjection' | 'uuid'
>;
export type CreatePersonalApiKeyInput = {
  userId: number;
  scopes: string[];
  /** null: every project the user belongs to */
  scopedProjectIds: number[] | null;
  label?: string;
  /** the raw key to use (INIT_PERSONAL_API_KEY); a new one is generated when absent */
  rawKey?: string;
};

/** A personal API key of the user. The raw key is returned once: only its hash and mask are stored. */
export async function createPersonalApiKey(
  deps: CreatePersonalApiKeyDeps,
  input: CreatePersonalApiKeyInput,
  /** who asked (a request's user, key and id); the CLI's and the bootstrap's: the key's user */
  metadata?: EventMetadata,
): Promise<{ keyId: string; personalApiKey: string }> {
  const keyId = deps.uuid();
  const personalApiKey = input.rawKey ?? generateKey('phx');
  const now = deps.now();
  const result = await handleCommand(
    deps.store,
    personalApiKeyStream(keyId),
    personalApiKeyDecider,
    {
      type: 'CreatePersonalApiKey',
      data: {
        keyId,
        userId: input.userId,
        label: input.label ?? 'cli',
        secureValue: hashKey(personalApiKey),
        maskValue: maskKey(personalApiKey),
        scopes: input.scopes,
        scopedProjectIds: input.scopedProjectIds,
        createdAt: now.toISOString(),
      },
    },
    metadata ?? accessMetadata(now, input.userId),
  );
  await deps.awaitProjection(accessProjection, result.position);
  return { keyId, personalApiKey };
}
