import { annotationsProjection } from '../../projections/annotations/annotationsProjection.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { annotationDecider, type PatchAnnotation } from './annotationDecider.ts';
import { type AnnotationDeps, assertDashboard, assertInsight } from './annotationDeps.ts';
import { annotationStream } from './model/annotation.ts';

/** Changes, soft-deletes or restores an annotation (404 for another project's). */
export async function patchAnnotation(
  deps: AnnotationDeps,
  input: { annotationId: number; projectId: number; changes: PatchAnnotation['changes'] },
  metadata: EventMetadata,
): Promise<void> {
  if (input.changes.dashboard_id !== undefined)
    await assertDashboard(deps, input.projectId, input.changes.dashboard_id);
  if (input.changes.dashboard_item !== undefined)
    await assertInsight(deps, input.projectId, input.changes.dashboard_item);
  const handled = await handleCommand(
    deps.store,
    annotationStream(input.annotationId),
    annotationDecider,
    { type: 'PatchAnnotation', ...input },
    metadata,
  );
  await deps.awaitProjection(annotationsProjection, handled.position);
}
