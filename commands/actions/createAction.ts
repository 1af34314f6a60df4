import { actionsProjection } from '../../projections/actions/actionsProjection.ts';
import { actionsReader } from '../../projections/actions/actionsReader.ts';
import { nextId } from '../../src/appContext.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { actionDecider } from './actionDecider.ts';
import type { ActionDeps } from './actionDeps.ts';
import { type ActionFields, actionStream } from './model/action.ts';

/**
 * Creates an action and returns once the actions read model shows it. The name check reads the
 * read model (as PostHog's serializer reads its table): two creates racing may both pass it.
 */
export async function createAction(
  deps: ActionDeps,
  input: { projectId: number; userId: number | null; fields: ActionFields },
  metadata: EventMetadata,
): Promise<{ actionId: number }> {
  const nameTakenBy = await actionsReader(deps.pool).nameTakenBy(
    input.projectId,
    input.fields.name,
  );
  const actionId = await nextId(deps.pool, 'action');
  const createdAt = deps.now().toISOString();
  const handled = await handleCommand(
    deps.store,
    actionStream(actionId),
    actionDecider,
    {
      type: 'CreateAction',
      actionId,
      projectId: input.projectId,
      // pinned at creation when asked, at this server's clock (as a later PATCH pins)
      fields: { ...input.fields, pinned_at: input.fields.pinned_at ? createdAt : null },
      createdAt,
      createdByUserId: input.userId,
      nameTakenBy,
    },
    metadata,
  );
  await deps.awaitProjection(actionsProjection, handled.position);
  return { actionId };
}
