import { randomUUID } from 'node:crypto';
import { accessProjection } from '../../projections/access/accessProjection.ts';
import { type AppContext, nextId } from '../../src/appContext.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import { generateKey, hashKey, maskKey } from '../../src/core/keys.ts';
import { ACCESS_LEVEL, personalApiKeyStream, projectStream, roleStream, userStream } from './accessEvents.ts';
import { personalApiKeyDecider, projectDecider, roleDecider, userDecider } from './accessDeciders.ts';

/** Operations behind the CLI and the bootstrap; each waits until the access read model shows it. */
const meta = (ctx: AppContext, userId?: number, projectId?: number) => ({
  occurredAt: ctx.now().toISOString(),
  ...(userId !== undefined ? { userId } : {}),
  ...(projectId !== undefined ? { projectId } : {}),
});

export async function ensureUser(
  ctx: AppContext,
  input: { email: string; firstName?: string; lastName?: string },
): Promise<{ userId: number; created: boolean }> {
  const found = await ctx.pool.query<{ id: number }>('SELECT id FROM users WHERE lower(email) = lower($1)', [input.email]);
  if (found.rows[0]) return { userId: found.rows[0].id, created: false };
  const userId = await nextId(ctx.pool, 'user');
  const result = await handleCommand(ctx.store, userStream(userId), userDecider, {
    type: 'CreateUser',
    data: {
      userId,
      uuid: randomUUID(),
      distinctId: randomUUID(),
      email: input.email,
      firstName: input.firstName ?? input.email.split('@')[0] ?? '',
      lastName: input.lastName ?? '',
      createdAt: ctx.now().toISOString(),
    },
  }, meta(ctx));
  await ctx.awaitProjection(accessProjection, result.position);
  return { userId, created: true };
}

export async function createProject(
  ctx: AppContext,
  input: { name: string; ownerUserId: number; projectApiKey?: string },
): Promise<{ projectId: number; projectApiKey: string }> {
  const projectId = await nextId(ctx.pool, 'project');
  const projectApiKey = input.projectApiKey ?? generateKey('phc');
  await handleCommand(ctx.store, projectStream(projectId), projectDecider, {
    type: 'CreateProject',
    data: {
      projectId,
      name: input.name,
      apiKeyHash: hashKey(projectApiKey),
      apiKeyMask: maskKey(projectApiKey),
      createdByUserId: input.ownerUserId,
      createdAt: ctx.now().toISOString(),
    },
  }, meta(ctx, input.ownerUserId, projectId));
  await addProjectMember(ctx, { projectId, userId: input.ownerUserId, level: ACCESS_LEVEL.owner });
  return { projectId, projectApiKey };
}

export async function addProjectMember(
  ctx: AppContext,
  input: { projectId: number; userId: number; level: number },
): Promise<void> {
  const result = await handleCommand(ctx.store, projectStream(input.projectId), projectDecider, {
    type: 'AddProjectMember',
    data: input,
  }, meta(ctx, undefined, input.projectId));
  await ctx.awaitProjection(accessProjection, result.position);
}

export async function createPersonalApiKey(
  ctx: AppContext,
  input: { userId: number; scopes: string[]; scopedProjectIds: number[] | null; label?: string; rawKey?: string },
): Promise<{ keyId: string; personalApiKey: string }> {
  const keyId = randomUUID();
  const personalApiKey = input.rawKey ?? generateKey('phx');
  const result = await handleCommand(ctx.store, personalApiKeyStream(keyId), personalApiKeyDecider, {
    type: 'CreatePersonalApiKey',
    data: {
      keyId,
      userId: input.userId,
      label: input.label ?? 'cli',
      secureValue: hashKey(personalApiKey),
      maskValue: maskKey(personalApiKey),
      scopes: input.scopes,
      scopedProjectIds: input.scopedProjectIds,
      createdAt: ctx.now().toISOString(),
    },
  }, meta(ctx, input.userId));
  await ctx.awaitProjection(accessProjection, result.position);
  return { keyId, personalApiKey };
}

export async function createRole(
  ctx: AppContext,
  input: { name: string; featureFlagsAccessLevel: number; memberUserIds: number[]; createdByUserId: number | null },
): Promise<{ roleId: string }> {
  const roleId = randomUUID();
  const stream = roleStream(roleId);
  let result = await handleCommand(ctx.store, stream, roleDecider, {
    type: 'CreateRole',
    data: {
      roleId,
      name: input.name,
      featureFlagsAccessLevel: input.featureFlagsAccessLevel,
      createdByUserId: input.createdByUserId,
      createdAt: ctx.now().toISOString(),
    },
  }, meta(ctx, input.createdByUserId ?? undefined));
  for (const userId of input.memberUserIds) {
    result = await handleCommand(ctx.store, stream, roleDecider, {
      type: 'AddRoleMember',
      data: { roleId, userId, addedAt: ctx.now().toISOString() },
    }, meta(ctx, input.createdByUserId ?? undefined));
  }
  await ctx.awaitProjection(accessProjection, result.position);
  return { roleId };
}
