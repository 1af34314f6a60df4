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
  pinned: boolean;
  filters: Record<string, unknown>;
  deleted: boolean;
};

const isDbInteger = (n: number) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647;

/** The only reader of the `dashboards` read model. */
export const dashboardsReader = (pool: pg.Pool) => ({
  /** One dashboard; a soft-deleted one only with `includeDeleted` (the deleting PATCH's answer). */
  async get(
    projectId: number,
    id: number,
    includeDeleted = false,
  ): Promise<DashboardRow | undefined> {
    if (!isDbInteger(id)) return undefined;
    const { rows } = await pool.query<DashboardRow>(
      'SELECT * FROM dashboards WHERE project_id = $1 AND id = $2 AND (NOT deleted OR $3)',
      [projectId, id, includeDeleted],
    );
    return rows[0];
  },

  /** A page of the project's live dashboards, pinned first, then oldest first (stable for paging). */
  async list(
    projectId: number,
    page: { limit: number; offset: number },
  ): Promise<{ count: number; rows: DashboardRow[] }> {
    const [count, rows] = await Promise.all([
      pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM dashboards WHERE project_id = $1 AND NOT deleted',
        [projectId],
      ),
      pool.query<DashboardRow>(
        `SELECT * FROM dashboards WHERE project_id = $1 AND NOT deleted
          ORDER BY pinned DESC, id LIMIT $2 OFFSET $3`,
        [projectId, page.limit, page.offset],
      ),
    ]);
    return { count: Number(count.rows[0]!.n), rows: rows.rows };
  },

  /** Which of these ids are the project's live dashboards. */
  async liveOf(projectId: number, ids: readonly number[]): Promise<Set<number>> {
    const valid = ids.filter(isDbInteger);
    if (valid.length === 0) return new Set();
    const { rows } = await pool.query<{ id: number }>(
      'SELECT id FROM dashboards WHERE project_id = $1 AND id = ANY($2::int[]) AND NOT deleted',
      [projectId, valid],
    );
    return new Set(rows.map((r) => r.id));
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
