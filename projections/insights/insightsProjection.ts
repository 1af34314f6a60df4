import { match } from 'ts-pattern';
import type { DashboardSoftDeleted } from '../../commands/dashboards/model/userDashboard.ts';
import { type InsightEvent, insightEventTypes } from '../../commands/insights/model/insight.ts';
import { pgProjection } from '../../src/processing/projection.ts';

/**
 * The saved insights read model: one row per insight, and its tiles (the dashboards it is on). A
 * dashboard's soft delete drops its tiles, as PostHog marks them deleted. Computed results are not
 * here: they are the read side's cache (queries/insights/insightResultCache.ts). v2: without the
 * v1 `result` and `last_refresh` columns, and the retired `InsightRefreshed` no longer folded.
 */
export const insightsProjection = pgProjection<InsightEvent | DashboardSoftDeleted>({
  name: 'insights',
  version: 2,
  tables: ['insights', 'insight_tiles'],
  filter: { eventTypes: [...insightEventTypes, 'DashboardSoftDeleted'] },
  schema: `
    CREATE TABLE IF NOT EXISTS insights (
      id integer PRIMARY KEY,
      project_id integer NOT NULL,
      short_id text NOT NULL,
      name text,
      description text NOT NULL,
      filters jsonb NOT NULL,
      query jsonb,
      saved boolean NOT NULL,
      favorited boolean NOT NULL,
      deleted boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      created_by_user_id integer,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX IF NOT EXISTS insights_project ON insights (project_id, id);
    CREATE INDEX IF NOT EXISTS insights_short_id ON insights (project_id, short_id);
    CREATE TABLE IF NOT EXISTS insight_tiles (
      id integer PRIMARY KEY,
      insight_id integer NOT NULL,
      dashboard_id integer NOT NULL
    );
    CREATE INDEX IF NOT EXISTS insight_tiles_insight ON insight_tiles (insight_id);
    CREATE INDEX IF NOT EXISTS insight_tiles_dashboard ON insight_tiles (dashboard_id);
  `,
  async handle(events, tx) {
    const setTiles = async (
      insightId: number,
      tiles: { tileId: number; dashboardId: number }[],
    ) => {
      await tx.query('DELETE FROM insight_tiles WHERE insight_id = $1', [insightId]);
      await tx.query(
        `INSERT INTO insight_tiles (id, insight_id, dashboard_id)
         SELECT t, $1, d FROM unnest($2::int[], $3::int[]) AS x(t, d) ON CONFLICT (id) DO NOTHING`,
        [insightId, tiles.map((t) => t.tileId), tiles.map((t) => t.dashboardId)],
      );
    };
    for (const event of events) {
      await match(event as InsightEvent | DashboardSoftDeleted)
        .with({ type: 'InsightCreated' }, async (e) => {
          const f = e.data.fields;
          await tx.query(
            `INSERT INTO insights (id, project_id, short_id, name, description, filters, query, saved,
                                   favorited, created_at, created_by_user_id, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $10) ON CONFLICT (id) DO NOTHING`,
            [
              e.data.insightId,
              e.data.projectId,
              e.data.shortId,
              f.name,
              f.description,
              JSON.stringify(f.filters),
              f.query === null ? null : JSON.stringify(f.query),
              f.saved,
              f.favorited,
              e.data.createdAt,
              e.data.createdByUserId,
            ],
          );
          await setTiles(e.data.insightId, e.data.tiles);
        })
        .with({ type: 'InsightUpdated' }, (e) => {
          const c = e.data.changes;
          return tx.query(
            `UPDATE insights SET
                name = CASE WHEN $2 THEN $3 ELSE name END,
                description = COALESCE($4, description),
                filters = COALESCE($5::jsonb, filters),
                query = CASE WHEN $6 THEN $7::jsonb ELSE query END,
                saved = COALESCE($8, saved), favorited = COALESCE($9, favorited),
                updated_at = $10
              WHERE id = $1`,
            [
              e.data.insightId,
              'name' in c,
              c.name ?? null,
              c.description ?? null,
              c.filters === undefined ? null : JSON.stringify(c.filters),
              'query' in c,
              c.query == null ? null : JSON.stringify(c.query),
              c.saved ?? null,
              c.favorited ?? null,
              e.data.at,
            ],
          );
        })
        .with({ type: 'InsightDashboardsSet' }, (e) => setTiles(e.data.insightId, e.data.tiles))
        .with({ type: 'InsightSoftDeleted' }, (e) =>
          tx.query('UPDATE insights SET deleted = true WHERE id = $1', [e.data.insightId]),
        )
        .with({ type: 'InsightRestored' }, (e) =>
          tx.query('UPDATE insights SET deleted = false WHERE id = $1', [e.data.insightId]),
        )
        .with({ type: 'DashboardSoftDeleted' }, (e) =>
          tx.query('DELETE FROM insight_tiles WHERE dashboard_id = $1', [e.data.dashboardId]),
        )
        .exhaustive();
    }
  },
});
