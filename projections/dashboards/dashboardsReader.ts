import type pg from 'pg';
import type { DashboardTile } from '../../commands/dashboards/model/dashboard.ts';

export type DashboardRow = {
  id: number;
  project_id: number;
  name: string;
  description: string;
  feature_flag_id: number | null;
  tiles: DashboardTile[];
  enriched: boolean;
  created_at: Date;
  created_by_user_id: number | null;
};

const isDbInteger = (n: number) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647;

/** The only reader of the `dashboards` read model. */
export const dashboardsReader = (pool: pg.Pool) => ({
  async get(projectId: number, id: number): Promise<DashboardRow | undefined> {
    if (!isDbInteger(id)) return undefined;
    const { rows } = await pool.query<DashboardRow>(
      'SELECT * FROM dashboards WHERE project_id = $1 AND id = $2',
      [projectId, id],
    );
    return rows[0];
  },

  /** flag id → its usage dashboard (id, enriched), for the flags that have one. */
  async usageDashboardsOf(
    projectId: number,
    flagIds: readonly number[],
  ): Promise<Map<number, { id: number; enriched: boolean }>> {
    if (flagIds.length === 0) return new Map();
    const { rows } = await pool.query<{ id: number; feature_flag_id: number; enriched: boolean }>(
      'SELECT id, feature_flag_id, enriched FROM dashboards WHERE project_id = $1 AND feature_flag_id = ANY($2::int[])',
      [projectId, flagIds],
    );
    return new Map(rows.map((r) => [r.feature_flag_id, { id: r.id, enriched: r.enriched }]));
  },
});
export type DashboardsReader = ReturnType<typeof dashboardsReader>;
