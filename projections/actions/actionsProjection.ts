import { match } from 'ts-pattern';
import { type ActionEvent, actionEventTypes } from '../../commands/actions/model/action.ts';
import { pgProjection } from '../../src/processing/projection.ts';
import { setRowDeleted } from '../shared/softDeletedRow.ts';

/** The actions read model: one row per action with its steps, as it is now. */
export const actionsProjection = pgProjection<ActionEvent>({
  name: 'actions',
  version: 1,
  tables: ['actions'],
  filter: { eventTypes: actionEventTypes },
  schema: `
    CREATE TABLE IF NOT EXISTS actions (
      id integer PRIMARY KEY,
      project_id integer NOT NULL,
      name text NOT NULL,
      description text NOT NULL,
      tags jsonb NOT NULL,
      post_to_slack boolean NOT NULL,
      slack_message_format text NOT NULL,
      steps jsonb NOT NULL,
      pinned_at timestamptz,
      deleted boolean NOT NULL,
      created_at timestamptz NOT NULL,
      created_by_user_id integer,
      updated_at timestamptz NOT NULL,
      version integer NOT NULL
    );
    CREATE INDEX IF NOT EXISTS actions_project ON actions (project_id, name, id);
  `,
  async handle(events, tx) {
    for (const event of events) {
      const at = event.metadata.occurredAt;
      await match(event as ActionEvent)
        .with({ type: 'ActionCreated' }, ({ data: d }) =>
          tx.query(
            `INSERT INTO actions (id, project_id, name, description, tags, post_to_slack,
               slack_message_format, steps, pinned_at, deleted, created_at, created_by_user_id,
               updated_at, version)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, false, $10, $11, $10, 1)
             ON CONFLICT (id) DO NOTHING`,
            [
              d.actionId,
              d.projectId,
              d.fields.name,
              d.fields.description,
              JSON.stringify(d.fields.tags),
              d.fields.post_to_slack,
              d.fields.slack_message_format,
              JSON.stringify(d.fields.steps),
              d.fields.pinned_at,
              d.createdAt,
              d.createdByUserId,
            ],
          ),
        )
        .with({ type: 'ActionUpdated' }, ({ data: d }) => {
          const c = d.changes;
          const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));
          return tx.query(
            `UPDATE actions SET
               name = COALESCE($2, name),
               description = COALESCE($3, description),
               tags = COALESCE($4::jsonb, tags),
               post_to_slack = COALESCE($5, post_to_slack),
               slack_message_format = COALESCE($6, slack_message_format),
               steps = COALESCE($7::jsonb, steps),
               pinned_at = CASE WHEN $8 THEN $9::timestamptz ELSE pinned_at END,
               updated_at = $10, version = version + 1
             WHERE id = $1`,
            [
              d.actionId,
              c.name ?? null,
              c.description ?? null,
              json(c.tags),
              c.post_to_slack ?? null,
              c.slack_message_format ?? null,
              json(c.steps),
              Object.hasOwn(c, 'pinned_at'),
              c.pinned_at ?? null,
              at,
            ],
          );
        })
        .with({ type: 'ActionSoftDeleted' }, { type: 'ActionRestored' }, (e) =>
          setRowDeleted(tx, 'actions', e.data.actionId, e.type === 'ActionSoftDeleted', at),
        )
        .exhaustive();
    }
  },
});
