import { describe, it } from 'vitest';
import { annotationDecider } from '../../../commands/annotations/annotationDecider.ts';
import type {
  AnnotationCreated,
  AnnotationFields,
} from '../../../commands/annotations/model/annotation.ts';
import { DeciderSpecification } from '../../support/deciderSpec.ts';

const given = DeciderSpecification.for(annotationDecider);
const fields: AnnotationFields = {
  content: 'Launched v2',
  date_marker: '2026-03-01T12:00:00.000Z',
  scope: 'project',
  creation_type: 'USR',
  dashboard_item: null,
  dashboard_id: null,
  is_emoji: false,
};
const create = {
  type: 'CreateAnnotation',
  annotationId: 5,
  projectId: 1,
  fields,
  createdAt: '2026-03-02T00:00:00.000Z',
  createdByUserId: 3,
} as const;
const created: AnnotationCreated = {
  type: 'AnnotationCreated',
  data: {
    annotationId: 5,
    projectId: 1,
    fields,
    createdAt: '2026-03-02T00:00:00.000Z',
    createdByUserId: 3,
  },
};
const patch = (changes: Record<string, unknown>, projectId = 1) =>
  ({ type: 'PatchAnnotation', annotationId: 5, projectId, changes }) as const;
const deleted = { type: 'AnnotationSoftDeleted', data: { annotationId: 5 } } as const;

describe('annotationDecider', () => {
  it('creates once', () => {
    given([]).when(create).then([created]);
    given([created]).when(create).thenNothing();
  });

  it("refuses PostHog's deprecated recording scope and an emoji annotation that is not one emoji", () => {
    given([])
      .when({ ...create, fields: { ...fields, scope: 'recording' } })
      .thenFails({ kind: 'validation', attr: 'scope', detail: 'Recording scope is deprecated' });
    given([])
      .when({ ...create, fields: { ...fields, is_emoji: true } })
      .thenFails({
        attr: 'content',
        detail: 'When is_emoji is True, content must be a single emoji',
      });
    given([])
      .when({ ...create, fields: { ...fields, is_emoji: true, content: null } })
      .thenFails({ detail: 'When is_emoji is True, content cannot be empty' });
    given([])
      .when({ ...create, fields: { ...fields, is_emoji: true, content: '👍🏽' } })
      .then([
        {
          ...created,
          data: { ...created.data, fields: { ...fields, is_emoji: true, content: '👍🏽' } },
        },
      ]);
    given([created])
      .when(patch({ scope: 'recording' }))
      .thenFails({ attr: 'scope' });
  });

  it('records only the fields that change, null included', () => {
    given([created])
      .when(patch({ content: 'Launched v2', date_marker: null, scope: 'project' }))
      .then([
        { type: 'AnnotationUpdated', data: { annotationId: 5, changes: { date_marker: null } } },
      ]);
    given([created])
      .when(patch({ content: 'Launched v2' }))
      .thenNothing();
  });

  it('soft-deletes, and restores with deleted: false as PostHog does', () => {
    given([created])
      .when(patch({ deleted: true }))
      .then([deleted]);
    given([created, deleted])
      .when(patch({ deleted: true }))
      .thenNothing();
    given([created, deleted])
      .when(patch({ deleted: false }))
      .then([{ type: 'AnnotationRestored', data: { annotationId: 5 } }]);
    given([created])
      .when(patch({ deleted: false }))
      .thenNothing();
  });

  it("answers not found for a missing annotation or another project's", () => {
    given([])
      .when(patch({ content: 'x' }))
      .thenFails({ kind: 'not_found' });
    given([created])
      .when(patch({ content: 'x' }, 2))
      .thenFails({ kind: 'not_found' });
  });
});
