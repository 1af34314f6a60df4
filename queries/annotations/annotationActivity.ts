import type { z } from 'zod';
import {
  type AnnotationEvent,
  annotationEventTypes,
  annotationFieldNames,
  annotationStream,
  evolveAnnotation,
  initialAnnotationState,
} from '../../commands/annotations/model/annotation.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import {
  activityChangeSchema,
  activityEntrySchema,
  activityReaders,
  changeMaker,
  entryBase,
  foldActivity,
  type RawActivityEntry,
} from '../shared/resourceActivity.ts';

const Change = activityChangeSchema('Annotation');
type Change = z.infer<typeof Change>;

/** PostHog's activity log entry (scope `Annotation`), one per change a user made. */
export const AnnotationActivityEntry = activityEntrySchema({
  id: 'AnnotationActivityLogEntry',
  scope: 'Annotation',
  activities: ['created', 'updated', 'deleted', 'restored'],
  change: Change,
});
type Entry = RawActivityEntry<typeof AnnotationActivityEntry>;

const change = changeMaker('Annotation');

/**
 * One entry per change to an annotation, folded from its stream with the decider's own `evolve`:
 * created (every field), updated (the changed fields, before and after), deleted, restored.
 */
export function annotationActivityOf(events: readonly RecordedEvent<AnnotationEvent>[]): Entry[] {
  return foldActivity(
    events,
    initialAnnotationState(),
    evolveAnnotation,
    (entries: Entry[], event, now, before) => {
      const id = String(event.data.annotationId);
      const entry = (activity: Entry['activity'], changes: Change[]): Entry => ({
        ...entryBase(event, 'Annotation', id),
        activity,
        detail: { id, name: now.fields.content, changes },
      });
      if (event.type === 'AnnotationCreated')
        entries.push(
          entry(
            'created',
            annotationFieldNames.map((f) => change('created', f, null, event.data.fields[f])),
          ),
        );
      else if (event.type === 'AnnotationUpdated' && before)
        entries.push(
          entry(
            'updated',
            annotationFieldNames
              .filter((f) => Object.hasOwn(event.data.changes, f))
              .map((f) => change('changed', f, before.fields[f], event.data.changes[f])),
          ),
        );
      else if (event.type === 'AnnotationSoftDeleted')
        entries.push(entry('deleted', [change('deleted', 'deleted', false, true)]));
      else if (event.type === 'AnnotationRestored')
        entries.push(entry('restored', [change('changed', 'deleted', true, false)]));
    },
  );
}

/** Annotation activity: of one (undefined when not in this project), of a project's annotations. */
export const { one: annotationActivity, all: allAnnotationsActivity } = activityReaders({
  stream: annotationStream,
  streamPrefix: 'annotation-',
  eventTypes: annotationEventTypes,
  createdType: 'AnnotationCreated',
  fold: annotationActivityOf,
});
