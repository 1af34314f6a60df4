import type pg from 'pg';

/** A flag as the `feature_flags` read model holds it, with the ids of the roles given access. */
export type FlagRow = {
  id: number;
  project_id: number;
  key: string;
  name: string;
  filters: Record<string, unknown>;
  active: boolean;
  deleted: boolean;
  ensure_experience_continuity: boolean;
  rollback_conditions: unknown;
  performed_rollback: boolean;
  tags: unknown[];
  analytics_dashboards: number[];
  has_enriched_analytics: boolean;
  created_by_user_id: number | null;
  created_at: Date;
  updated_at: Date;
  role_ids: string[];
};

/** The fields of a flag that evaluating it needs (local evaluation's definitions). */
export type FlagDefinitionRow = Pick<
  FlagRow,
  | 'id'
  | 'project_id'
  | 'key'
  | 'name'
  | 'filters'
  | 'active'
  | 'deleted'
  | 'ensure_experience_continuity'
> & { revision: number };

export type RoleAccessRow = {
  id: number;
  flag_id: number;
  role_id: string;
  added_at: Date;
  updated_at: Date;
};

/** Ids are Postgres `integer`s: anything outside that range names no row (and must not reach SQL). */
const isDbInteger = (n: number) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647;

/** Columns every flag read selects: the flag and the ids of the roles given access to it. */
const flagSelect = `
  SELECT f.*,
         COALESCE((SELECT array_agg(ra.role_id::text) FROM feature_flag_role_access ra WHERE ra.flag_id = f.id), '{}') AS role_ids
    FROM feature_flags f`;

/**
 * The only reader of the `feature_flags` read model's tables (`feature_flags`,
 * `feature_flag_role_access`). The flag commands read their facts through it, the flag queries
 * their rows; users and roles come from the access reader.
 */
export type FeatureFlagsReader = ReturnType<typeof featureFlagsReader>;

export const featureFlagsReader = (pool: pg.Pool) => ({
  /** A page of the project's live flags, newest first. Soft-deleted flags are hidden, as in PostHog. */
  async list(
    projectId: number,
    page: { limit: number; offset: number },
  ): Promise<{ count: number; rows: FlagRow[] }> {
    const [count, rows] = await Promise.all([
      pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM feature_flags WHERE project_id = $1 AND NOT deleted',
        [projectId],
      ),
      pool.query<FlagRow>(
        `${flagSelect} WHERE f.project_id = $1 AND NOT f.deleted ORDER BY f.created_at DESC, f.id DESC LIMIT $2 OFFSET $3`,
        [projectId, page.limit, page.offset],
      ),
    ]);
    return { count: Number(count.rows[0]!.n), rows: rows.rows };
  },

  /** The project's live flags (active and inactive), oldest first: what /decide evaluates. */
  async liveFlags(projectId: number): Promise<FlagRow[]> {
    const { rows } = await pool.query<FlagRow>(
      `${flagSelect} WHERE f.project_id = $1 AND NOT f.deleted ORDER BY f.created_at, f.id`,
      [projectId],
    );
    return rows;
  },

  /** One flag of the project, soft-deleted or not. */
  async get(projectId: number, flagId: number): Promise<FlagRow | undefined> {
    if (!isDbInteger(flagId)) return undefined;
    const { rows } = await pool.query<FlagRow>(
      `${flagSelect} WHERE f.project_id = $1 AND f.id = $2`,
      [projectId, flagId],
    );
    return rows[0];
  },

  /**
   * The project's flags as SDKs evaluate them (local evaluation): every flag not deleted, inactive
   * ones included, in id order; `revision` is the flag stream's revision of the row.
   */
  async definitions(projectId: number): Promise<FlagDefinitionRow[]> {
    const { rows } = await pool.query<FlagDefinitionRow & { revision: string }>(
      `SELECT id, project_id, key, name, filters, active, deleted, ensure_experience_continuity, revision
         FROM feature_flags WHERE project_id = $1 AND NOT deleted ORDER BY id`,
      [projectId],
    );
    return rows.map((r) => ({ ...r, revision: Number(r.revision) }));
  },

  /** The project's live (not deleted) flag with this key: remote config names flags by key. */
  async liveByKey(projectId: number, key: string): Promise<FlagRow | undefined> {
    const { rows } = await pool.query<FlagRow>(
      `${flagSelect} WHERE f.project_id = $1 AND f.key = $2 AND NOT f.deleted`,
      [projectId, key],
    );
    return rows[0];
  },

  /** Another live flag of the project using `key` (the command side's uniqueness check). */
  async isKeyTaken(projectId: number, key: string, exceptFlagId?: number): Promise<boolean> {
    const { rowCount } = await pool.query(
      'SELECT 1 FROM feature_flags WHERE project_id = $1 AND key = $2 AND NOT deleted AND id <> $3',
      [projectId, key, exceptFlagId ?? -1],
    );
    return (rowCount ?? 0) > 0;
  },

  /** A page of a flag's role access entries, in id order, with their total. */
  async listRoleAccess(
    flagId: number,
    page: { limit: number; offset: number },
  ): Promise<{ count: number; rows: RoleAccessRow[] }> {
    const { rows } = await pool.query<RoleAccessRow & { total: string }>(
      `SELECT a.*, count(*) OVER () AS total FROM feature_flag_role_access a
        WHERE a.flag_id = $1 ORDER BY a.id LIMIT $2 OFFSET $3`,
      [flagId, page.limit, page.offset],
    );
    // A page past the end has no row to carry the total.
    const count = rows[0]
      ? Number(rows[0].total)
      : Number(
          (
            await pool.query<{ n: string }>(
              'SELECT count(*) AS n FROM feature_flag_role_access WHERE flag_id = $1',
              [flagId],
            )
          ).rows[0]!.n,
        );
    return { count, rows: rows.map(({ total: _total, ...row }) => row) };
  },

  async getRoleAccess(flagId: number, id: number): Promise<RoleAccessRow | undefined> {
    if (!isDbInteger(flagId) || !isDbInteger(id)) return undefined;
    const { rows } = await pool.query<RoleAccessRow>(
      'SELECT * FROM feature_flag_role_access WHERE flag_id = $1 AND id = $2',
      [flagId, id],
    );
    return rows[0];
  },

  /** The flags of the project that list the role, in id order (a role's `associated_flags`). */
  async flagsWithRole(roleId: string, projectId: number): Promise<{ id: number; key: string }[]> {
    const { rows } = await pool.query<{ id: number; key: string }>(
      `SELECT f.id, f.key FROM feature_flag_role_access a JOIN feature_flags f ON f.id = a.flag_id
        WHERE a.role_id = $1 AND f.project_id = $2 ORDER BY f.id`,
      [roleId, projectId],
    );
    return rows;
  },
});
