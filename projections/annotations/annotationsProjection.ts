import { match } from 'ts-pattern';
import {
  type AnnotationEvent,
  annotationEventTypes,
} from '../../commands/annotations/model/annotation.ts';
import { pgProjection } from '../../src/processing/projection.ts';
import { setRowDeleted } from '../shared/softDeletedRow.ts';

/** The annotations read model: one row per annotation, as it is now. */
export const annotationsProjection = pgProjection<AnnotationEvent>({
  name: 'annotations',
  version: 1,
  tables: ['annotations'],
  filter: { eventTypes: annotationEventTypes },
  schema: `
    CREATE TABLE IF NOT EXISTS annotations (
      id integer PRIMARY KEY,
      project_id integer NOT NULL,
      content text,
      date_marker timestamptz,
      scope text NOT NULL,
      creation_type text NOT NULL,
      dashboard_item integer,
      dashboard_id integer,
      is_emoji boolean NOT NULL,
      deleted boolean NOT NULL,
      created_at timestamptz NOT NULL,
      created_by_user_id integer,
      updated_at timestamptz NOT NULL,
      version integer NOT NULL
    );
    -- The list's order: newest marker first (PostHog's -date_marker; NULLs first in Postgres).
    CREATE INDEX IF NOT EXISTS annotations_project
      ON annotations (project_id, date_marker DESC, id DESC);
  `,
  async handle(events, tx) {
    for (const event of events) {
      const at = event.metadata.occurredAt;
      await match(event as AnnotationEvent)
        .with({ type: 'AnnotationCreated' }, ({ data: d }) =>
          tx.query(
            `INSERT INTO annotations (id, project_id, content, date_marker, scope, creation_type,
               dashboard_item, dashboard_id, is_emoji, deleted, created_at, created_by_user_id,
               updated_at, version)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, false, $10, $11, $10, 1)
             ON CONFLICT (id) DO NOTHING`,
            [
              d.annotationId,
              d.projectId,
              d.fields.content,
              d.fields.date_marker,
              d.fields.scope,
              d.fields.creation_type,
              d.fields.dashboard_item,
              d.fields.dashboard_id,
              d.fields.is_emoji,
              d.createdAt,
              d.createdByUserId,
            ],
          ),
        )
        .with({ type: 'AnnotationUpdated' }, ({ data: d }) => {
          // Nullable fields: a key present in `changes` sets the column, null included.
          const has = (k: keyof typeof d.changes) => Object.hasOwn(d.changes, k);
          return tx.query(
            `UPDATE annotations SET
               content = CASE WHEN $2 THEN $3 ELSE content END,
               date_marker = CASE WHEN $4 THEN $5::timestamptz ELSE date_marker END,
               scope = COALESCE($6, scope),
               creation_type = COALESCE($7, creation_type),
               dashboard_item = CASE WHEN $8 THEN $9::integer ELSE dashboard_item END,
               dashboard_id = CASE WHEN $10 THEN $11::integer ELSE dashboard_id END,
               is_emoji = COALESCE($12, is_emoji),
               updated_at = $13, version = version + 1
             WHERE id = $1`,
            [
              d.annotationId,
              has('content'),
              d.changes.content ?? null,
              has('date_marker'),
              d.changes.date_marker ?? null,
              d.changes.scope ?? null,
              d.changes.creation_type ?? null,
              has('dashboard_item'),
              d.changes.dashboard_item ?? null,
              has('dashboard_id'),
              d.changes.dashboard_id ?? null,
              d.changes.is_emoji ?? null,
              at,
            ],
          );
        })
        .with({ type: 'AnnotationSoftDeleted' }, { type: 'AnnotationRestored' }, (e) =>
          setRowDeleted(
            tx,
            'annotations',
            e.data.annotationId,
            e.type === 'AnnotationSoftDeleted',
            at,
          ),
        )
        .exhaustive();
    }
  },
});
