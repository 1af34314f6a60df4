import { accessProjection } from '../../projections/access/accessProjection.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import { userDecider } from './accessDeciders.ts';
import { type AccessDeps, accessMetadata } from './accessDeps.ts';
import { userStream } from './model/accessEvents.ts';

export type EnsureUserDeps = Pick<
  AccessDeps,
  'store' | 'now' | 'awaitProjection' | 'access' | 'nextId' | 'uuid'
>;
export type EnsureUserInput = { email: string; firstName?: string; lastName?: string };

/** The user with this email (case-insensitive), created when there is none. */
export async function ensureUser(
  deps: EnsureUserDeps,
  input: EnsureUserInput,
): Promise<{ userId: number; created: boolean }> {
  const found = await deps.access.userIdByEmail(input.email);
  if (found !== undefined) return { userId: found, created: false };
  const userId = await deps.nextId('user');
  const now = deps.now();
  const result = await handleCommand(
    deps.store,
    userStream(userId),
    userDecider,
    {
      type: 'CreateUser',
      data: {
        userId,
        uuid: deps.uuid(),
        distinctId: deps.uuid(),
        email: input.email,
        firstName: input.firstName ?? input.email.split('@')[0] ?? '',
        lastName: input.lastName ?? '',
        createdAt: now.toISOString(),
      },
    },
    accessMetadata(now),
  );
  await deps.awaitProjection(accessProjection, result.position);
  return { userId, created: true };
}
