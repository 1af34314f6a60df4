import type { Event } from '../../../src/core/event.ts';
import {
  type FieldsResourceState,
  fieldsResourceEvolve,
  initialFieldsResourceState,
} from '../../shared/model/fieldsResource.ts';

/**
 * An annotation: a note on a point in time of the project's charts, as PostHog keeps it
 * (posthog/models/annotation.py). `scope` says where it shows: on one insight (`dashboard_item`),
 * one dashboard, the project, or the organization; `recording` is PostHog's deprecated scope,
 * refused on create and kept only so that a value read back is never a surprise.
 */
export const ANNOTATION_SCOPES = [
  'dashboard_item',
  'dashboard',
  'project',
  'organization',
  'recording',
] as const;
export type AnnotationScope = (typeof ANNOTATION_SCOPES)[number];
/** `USR` a person wrote it, `GIT` an integration (PostHog's GitHub creation type). */
export const CREATION_TYPES = ['USR', 'GIT'] as const;

export type AnnotationFields = {
  content: string | null;
  /** ISO 8601, the moment the note marks; null: none */
  date_marker: string | null;
  scope: AnnotationScope;
  creation_type: (typeof CREATION_TYPES)[number];
  /** the insight of a `dashboard_item` annotation */
  dashboard_item: number | null;
  dashboard_id: number | null;
  is_emoji: boolean;
};
export const annotationFieldNames = [
  'content',
  'date_marker',
  'scope',
  'creation_type',
  'dashboard_item',
  'dashboard_id',
  'is_emoji',
] as const satisfies readonly (keyof AnnotationFields)[];

export type AnnotationCreated = Event<
  'AnnotationCreated',
  {
    annotationId: number;
    projectId: number;
    fields: AnnotationFields;
    createdAt: string;
    createdByUserId: number | null;
  }
>;
/** carries only the fields whose value changed */
export type AnnotationUpdated = Event<
  'AnnotationUpdated',
  { annotationId: number; changes: Partial<AnnotationFields> }
>;
export type AnnotationSoftDeleted = Event<'AnnotationSoftDeleted', { annotationId: number }>;
/** PATCH `deleted: false` on a soft-deleted annotation, as PostHog's UI undoes a delete */
export type AnnotationRestored = Event<'AnnotationRestored', { annotationId: number }>;
export type AnnotationEvent =
  | AnnotationCreated
  | AnnotationUpdated
  | AnnotationSoftDeleted
  | AnnotationRestored;

export const annotationEventTypes = [
  'AnnotationCreated',
  'AnnotationUpdated',
  'AnnotationSoftDeleted',
  'AnnotationRestored',
] as const satisfies readonly AnnotationEvent['type'][];
export const annotationStream = (annotationId: number) => `annotation-${annotationId}`;

export type AnnotationState = FieldsResourceState<AnnotationFields>;
export const initialAnnotationState: () => AnnotationState = initialFieldsResourceState;
export const evolveAnnotation: (state: AnnotationState, event: AnnotationEvent) => AnnotationState =
  fieldsResourceEvolve<'Annotation', AnnotationFields>('Annotation');
