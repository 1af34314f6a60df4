import { actionsProjection } from '../../projections/actions/actionsProjection.ts';
import { actionsReader } from '../../projections/actions/actionsReader.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { actionDecider, type PatchAction } from './actionDecider.ts';
import type { ActionDeps } from './actionDeps.ts';
import { actionStream } from './model/action.ts';

/** Changes, soft-deletes or restores an action (404 for another project's). */
export async function patchAction(
  deps: ActionDeps,
  input: { actionId: number; projectId: number; changes: PatchAction['changes'] },
  metadata: EventMetadata,
): Promise<void> {
  const nameTakenBy =
    input.changes.name === undefined
      ? null
      : await actionsReader(deps.pool).nameTakenBy(
          input.projectId,
          input.changes.name,
          input.actionId,
        );
  const handled = await handleCommand(
    deps.store,
    actionStream(input.actionId),
    actionDecider,
    { type: 'PatchAction', ...input, nameTakenBy, now: deps.now().toISOString() },
    metadata,
  );
  await deps.awaitProjection(actionsProjection, handled.position);
}
