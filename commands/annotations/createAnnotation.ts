import { annotationsProjection } from '../../projections/annotations/annotationsProjection.ts';
import { nextId } from '../../src/appContext.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { annotationDecider } from './annotationDecider.ts';
import { type AnnotationDeps, assertDashboard, assertInsight } from './annotationDeps.ts';
import { type AnnotationFields, annotationStream } from './model/annotation.ts';

/** Creates an annotation and returns once the annotations read model shows it. */
export async function createAnnotation(
  deps: AnnotationDeps,
  input: { projectId: number; userId: number | null; fields: AnnotationFields },
  metadata: EventMetadata,
): Promise<{ annotationId: number }> {
  await assertDashboard(deps, input.projectId, input.fields.dashboard_id);
  await assertInsight(deps, input.projectId, input.fields.dashboard_item);
  const annotationId = await nextId(deps.pool, 'annotation');
  const handled = await handleCommand(
    deps.store,
    annotationStream(annotationId),
    annotationDecider,
    {
      type: 'CreateAnnotation',
      annotationId,
      projectId: input.projectId,
      fields: input.fields,
      createdAt: deps.now().toISOString(),
      createdByUserId: input.userId,
    },
    metadata,
  );
  await deps.awaitProjection(annotationsProjection, handled.position);
  return { annotationId };
}
