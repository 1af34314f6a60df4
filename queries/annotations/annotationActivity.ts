import {
  type AnnotationEvent,
  annotationEventTypes,
  annotationFieldNames,
  annotationStream,
  evolveAnnotation,
} from '../../commands/annotations/model/annotation.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import {
  activityChangeSchema,
  activityEntrySchema,
  activityReaders,
  fieldsResourceActivity,
} from '../shared/resourceActivity.ts';

const Change = activityChangeSchema('Annotation');

/** PostHog's activity log entry (scope `Annotation`), one per change a user made. */
export const AnnotationActivityEntry = activityEntrySchema({
  id: 'AnnotationActivityLogEntry',
  scope: 'Annotation',
  activities: ['created', 'updated', 'deleted', 'restored'],
  change: Change,
});

/**
 * One entry per change to an annotation, folded from its stream with the decider's own `evolve`:
 * created (every field), updated (the changed fields, before and after), deleted, and a restore
 * as `restored`.
 */
export const annotationActivityOf = fieldsResourceActivity({
  scope: 'Annotation',
  entry: AnnotationActivityEntry,
  fieldNames: annotationFieldNames,
  evolve: evolveAnnotation,
  itemId: (event: RecordedEvent<AnnotationEvent>) => event.data.annotationId,
  name: (fields) => fields.content,
  restoredAs: 'restored',
});

/** Annotation activity: of one (undefined when not in this project), of a project's annotations. */
export const { one: annotationActivity, all: allAnnotationsActivity } = activityReaders({
  stream: annotationStream,
  streamPrefix: 'annotation-',
  eventTypes: annotationEventTypes,
  createdType: 'AnnotationCreated',
  fold: annotationActivityOf,
});
