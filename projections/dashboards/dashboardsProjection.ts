import { match } from 'ts-pattern';
import {
  type AnyDashboardEvent,
  anyDashboardEventTypes,
} from '../../commands/dashboards/model/userDashboard.ts';
import { pgProjection } from '../../src/processing/projection.ts';

/**
 * The dashboards read model: one row per dashboard, a flag's usage dashboard with its tiles
 * (insight filters) or a user's (its tiles are saved insights': projections/insights).
 */
export const dashboardsProjection = pgProjection<AnyDashboardEvent>({
  name: 'dashboards',
  version: 2,
  tables: ['dashboards'],
  filter: { eventTypes: anyDashboardEventTypes },
  schema: `
    CREATE TABLE IF NOT EXISTS dashboards (
      id integer PRIMARY KEY,
      project_id integer NOT NULL,
      name text NOT NULL,
      description text NOT NULL,
      feature_flag_id integer,
      tiles jsonb NOT NULL,
      enriched boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      created_by_user_id integer,
      pinned boolean NOT NULL DEFAULT false,
      filters jsonb NOT NULL DEFAULT '{}',
      deleted boolean NOT NULL DEFAULT false
    );
    CREATE INDEX IF NOT EXISTS dashboards_project ON dashboards (project_id, id);
    CREATE INDEX IF NOT EXISTS dashboards_flag ON dashboards (project_id, feature_flag_id);
  `,
  async handle(events, tx) {
    for (const event of events) {
      await match(event as AnyDashboardEvent)
        .with({ type: 'UsageDashboardCreated' }, (e) =>
          tx.query(
            `INSERT INTO dashboards (id, project_id, name, description, feature_flag_id, tiles, created_at, created_by_user_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
            [
              e.data.dashboardId,
              e.data.projectId,
              e.data.name,
              e.data.description,
              e.data.flagId,
              JSON.stringify(e.data.tiles),
              e.data.createdAt,
              e.data.createdByUserId,
            ],
          ),
        )
        .with({ type: 'UsageDashboardEnriched' }, (e) =>
          tx.query(
            `UPDATE dashboards SET tiles = tiles || $2::jsonb, enriched = true WHERE id = $1 AND NOT enriched`,
            [e.data.dashboardId, JSON.stringify(e.data.tiles)],
          ),
        )
        .with({ type: 'DashboardCreated' }, (e) =>
          tx.query(
            `INSERT INTO dashboards (id, project_id, name, description, tiles, created_at, created_by_user_id, pinned, filters)
             VALUES ($1, $2, $3, $4, '[]', $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
            [
              e.data.dashboardId,
              e.data.projectId,
              e.data.fields.name,
              e.data.fields.description,
              e.data.createdAt,
              e.data.createdByUserId,
              e.data.fields.pinned,
              JSON.stringify(e.data.fields.filters),
            ],
          ),
        )
        .with({ type: 'DashboardUpdated' }, (e) =>
          tx.query(
            `UPDATE dashboards SET name = COALESCE($2, name), description = COALESCE($3, description),
                    pinned = COALESCE($4, pinned), filters = COALESCE($5::jsonb, filters) WHERE id = $1`,
            [
              e.data.dashboardId,
              e.data.changes.name ?? null,
              e.data.changes.description ?? null,
              e.data.changes.pinned ?? null,
              e.data.changes.filters === undefined ? null : JSON.stringify(e.data.changes.filters),
            ],
          ),
        )
        .with({ type: 'DashboardSoftDeleted' }, (e) =>
          tx.query('UPDATE dashboards SET deleted = true WHERE id = $1', [e.data.dashboardId]),
        )
        .exhaustive();
    }
  },
});
