import type pg from 'pg';

export type InsightRow = {
  id: number;
  project_id: number;
  short_id: string;
  name: string | null;
  description: string;
  filters: Record<string, unknown>;
  query: Record<string, unknown> | null;
  saved: boolean;
  favorited: boolean;
  deleted: boolean;
  created_at: Date;
  created_by_user_id: number | null;
  updated_at: Date;
  /** the insight's tiles, oldest first */
  tiles: { id: number; dashboard_id: number }[];
};

/** What the list narrows to (PostHog's insight list filters). */
export type InsightListFilter = Readonly<{
  shortId?: string | undefined;
  /** true: saved or on a dashboard; false: not saved */
  saved?: boolean | undefined;
  favorited?: boolean | undefined;
  createdBy?: number | undefined;
  /** in name or description, case-insensitive */
  search?: string | undefined;
  /** the legacy insight type (`filters.insight`), e.g. TRENDS */
  insight?: string | undefined;
}>;

const SELECT_INSIGHT = `SELECT i.*, COALESCE((SELECT json_agg(json_build_object('id', t.id, 'dashboard_id', t.dashboard_id) ORDER BY t.id)
    FROM insight_tiles t WHERE t.insight_id = i.id), '[]') AS tiles
  FROM insights i`;

const isDbInteger = (n: number) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647;
const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The only reader of the `insights` read model. */
export const insightsReader = (pool: pg.Pool) => ({
  /** A page of the project's live insights, newest first. */
  async list(
    projectId: number,
    filter: InsightListFilter,
    page: { limit: number; offset: number },
  ): Promise<{ count: number; rows: InsightRow[] }> {
    const where = ['i.project_id = $1', 'NOT i.deleted'];
    const params: unknown[] = [projectId];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (filter.shortId !== undefined) where.push(`i.short_id = ${param(filter.shortId)}`);
    if (filter.saved === true)
      where.push('(i.saved OR EXISTS (SELECT 1 FROM insight_tiles t WHERE t.insight_id = i.id))');
    if (filter.saved === false) where.push('NOT i.saved');
    if (filter.favorited === true) where.push('i.favorited');
    if (filter.createdBy !== undefined)
      where.push(
        `i.created_by_user_id = ${param(isDbInteger(filter.createdBy) ? filter.createdBy : -1)}`,
      );
    if (filter.search !== undefined) {
      const like = param(`%${escapeLike(filter.search)}%`);
      where.push(`(i.name ILIKE ${like} OR i.description ILIKE ${like})`);
    }
    if (filter.insight !== undefined)
      where.push(`i.filters->>'insight' = ${param(filter.insight)}`);
    const condition = where.join(' AND ');
    const count = await pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM insights i WHERE ${condition}`,
      params,
    );
    const rows = await pool.query<InsightRow>(
      `${SELECT_INSIGHT} WHERE ${condition} ORDER BY i.id DESC LIMIT ${param(page.limit)} OFFSET ${param(page.offset)}`,
      params,
    );
    return { count: Number(count.rows[0]!.n), rows: rows.rows };
  },

  /** One insight; a soft-deleted one only with `includeDeleted` (the deleting PATCH's answer). */
  async get(
    projectId: number,
    id: number,
    includeDeleted = false,
  ): Promise<InsightRow | undefined> {
    if (!isDbInteger(id)) return undefined;
    const { rows } = await pool.query<InsightRow>(
      `${SELECT_INSIGHT} WHERE i.project_id = $1 AND i.id = $2 AND (NOT i.deleted OR $3)`,
      [projectId, id, includeDeleted],
    );
    return rows[0];
  },

  /** The live insights on a dashboard, in the order their tiles were made (at most `limit`). */
  async onDashboard(projectId: number, dashboardId: number, limit = 500): Promise<InsightRow[]> {
    const { rows } = await pool.query<InsightRow>(
      `${SELECT_INSIGHT} JOIN insight_tiles d ON d.insight_id = i.id
        WHERE i.project_id = $1 AND d.dashboard_id = $2 AND NOT i.deleted ORDER BY d.id LIMIT $3`,
      [projectId, dashboardId, limit],
    );
    return rows;
  },
});
export type InsightsReader = ReturnType<typeof insightsReader>;
