import { match } from 'ts-pattern';
import {
  type DashboardEvent,
  dashboardEventTypes,
} from '../../commands/dashboards/model/dashboard.ts';
import { pgProjection } from '../../src/processing/projection.ts';

/** The dashboards read model: one row per dashboard with its tiles (insight filters). */
export const dashboardsProjection = pgProjection<DashboardEvent>({
  name: 'dashboards',
  version: 1,
  tables: ['dashboards'],
  filter: { eventTypes: dashboardEventTypes },
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
      created_by_user_id integer
    );
    CREATE INDEX IF NOT EXISTS dashboards_flag ON dashboards (project_id, feature_flag_id);
  `,
  async handle(events, tx) {
    for (const event of events) {
      await match(event as DashboardEvent)
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
        .exhaustive();
    }
  },
});
