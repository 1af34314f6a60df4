import { isDeepStrictEqual } from 'node:util';
import { match } from 'ts-pattern';
import type { Decider } from '../../src/core/decider.ts';
import { type DomainError, invalidInput, notFound } from '../../src/core/errors.ts';
import {
  type AnnotationEvent,
  type AnnotationFields,
  type AnnotationState,
  annotationFieldNames,
  evolveAnnotation,
  initialAnnotationState,
} from './model/annotation.ts';

export type CreateAnnotation = Readonly<{
  type: 'CreateAnnotation';
  annotationId: number;
  projectId: number;
  fields: AnnotationFields;
  createdAt: string;
  createdByUserId: number | null;
}>;
export type PatchAnnotation = Readonly<{
  type: 'PatchAnnotation';
  annotationId: number;
  projectId: number;
  changes: Partial<AnnotationFields> & { deleted?: boolean };
}>;
export type AnnotationCommand = CreateAnnotation | PatchAnnotation;

// One emoji, skin tones and ZWJ sequences included (PostHog checks with `emoji.is_emoji`).
// The `v` flag is newer than the compiler's target, so it is passed as a value (Node 20 has it).
const unicodeSets: string = 'v';
const SINGLE_EMOJI = new RegExp('^\\p{RGI_Emoji}$', unicodeSets);

/** PostHog's serializer rules, checked on the annotation as it would be after the command. */
function invalid(fields: AnnotationFields): DomainError | undefined {
  if (fields.scope === 'recording') return invalidInput('Recording scope is deprecated', 'scope');
  if (fields.is_emoji && !fields.content)
    return invalidInput('When is_emoji is True, content cannot be empty', 'content');
  if (fields.is_emoji && !SINGLE_EMOJI.test(fields.content ?? ''))
    return invalidInput('When is_emoji is True, content must be a single emoji', 'content');
  return undefined;
}

/**
 * Create once; a patch records only what changes. A soft-deleted annotation can still be patched,
 * as in PostHog, whose UI undoes a delete with `deleted: false` (AnnotationRestored).
 */
function decide(
  command: AnnotationCommand,
  state: AnnotationState,
): AnnotationEvent[] | DomainError {
  return match(command)
    .with({ type: 'CreateAnnotation' }, (c): AnnotationEvent[] | DomainError => {
      if (state.status === 'present') return [];
      const refused = invalid(c.fields);
      if (refused) return refused;
      const { type: _type, ...data } = c;
      return [{ type: 'AnnotationCreated', data }];
    })
    .with({ type: 'PatchAnnotation' }, (c): AnnotationEvent[] | DomainError => {
      if (state.status === 'absent' || state.projectId !== c.projectId) return notFound();
      const changes: Partial<AnnotationFields> = {};
      for (const name of annotationFieldNames) {
        const value = c.changes[name];
        if (value !== undefined && !isDeepStrictEqual(value, state.fields[name]))
          Object.assign(changes, { [name]: value });
      }
      const events: AnnotationEvent[] = [];
      if (Object.keys(changes).length > 0) {
        // A scope already stored stays patchable; only moving to `recording` is refused.
        const after = { ...state.fields, ...changes };
        const refused = invalid(
          changes.scope === undefined ? { ...after, scope: 'project' } : after,
        );
        if (refused) return refused;
        events.push({ type: 'AnnotationUpdated', data: { annotationId: c.annotationId, changes } });
      }
      if (c.changes.deleted === true && !state.deleted)
        events.push({ type: 'AnnotationSoftDeleted', data: { annotationId: c.annotationId } });
      if (c.changes.deleted === false && state.deleted)
        events.push({ type: 'AnnotationRestored', data: { annotationId: c.annotationId } });
      return events;
    })
    .exhaustive();
}

export const annotationDecider: Decider<AnnotationState, AnnotationCommand, AnnotationEvent> = {
  initialState: initialAnnotationState,
  evolve: evolveAnnotation,
  decide,
};
