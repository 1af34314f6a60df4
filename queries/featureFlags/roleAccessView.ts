import type pg from 'pg';
import { z } from 'zod';
import type { FlagEditor } from '../../commands/featureFlags/canEditFlag.ts';
import { getFeatureFlag, isDbInteger } from './featureFlagQueries.ts';
import { FlagView, UserView, toUserView } from './flagView.ts';

/**
 * `members` and `associated_flags` are strings in the contract (api-spec.md); they carry the lists
 * as JSON text so a client can still read them (see docs/DECISIONS.md).
 */
export const RoleView = z
  .object({
    id: z.string(),
    name: z.string(),
    feature_flags_access_level: z.number().int(),
    created_at: z.string(),
    created_by: UserView.nullable(),
    members: z.string(),
    associated_flags: z.string(),
  })
  .meta({ id: 'Role' });

export const RoleAccessView = z
  .object({
    id: z.number().int(),
    feature_flag: FlagView,
    role: RoleView,
    role_id: z.string(),
    added_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'FeatureFlagRoleAccess' });
export type RoleAccessView = z.infer<typeof RoleAccessView>;

type Row = { id: number; flag_id: number; role_id: string; added_at: Date; updated_at: Date };

async function roleView(pool: pg.Pool, projectId: number, roleId: string): Promise<z.infer<typeof RoleView>> {
  const { rows } = await pool.query(
    `SELECT r.*, to_jsonb(u.*) AS creator,
       COALESCE((SELECT jsonb_agg(jsonb_build_object('user', to_jsonb(mu.*) - 'created_at', 'added_at', m.added_at) ORDER BY m.added_at)
                   FROM role_members m JOIN users mu ON mu.id = m.user_id WHERE m.role_id = r.id), '[]') AS members,
       COALESCE((SELECT jsonb_agg(jsonb_build_object('id', f.id, 'key', f.key) ORDER BY f.id)
                   FROM feature_flag_role_access a JOIN feature_flags f ON f.id = a.flag_id WHERE a.role_id = r.id AND f.project_id = $2), '[]') AS flags
       FROM roles r LEFT JOIN users u ON u.id = r.created_by_user_id WHERE r.id = $1`,
    [roleId, projectId],
  );
  const r = rows[0];
  return {
    id: r.id,
    name: r.name,
    feature_flags_access_level: r.feature_flags_access_level,
    created_at: (r.created_at as Date).toISOString(),
    created_by: r.creator ? toUserView(r.creator) : null,
    members: JSON.stringify(r.members),
    associated_flags: JSON.stringify(r.flags),
  };
}

async function toView(pool: pg.Pool, projectId: number, row: Row, editor: FlagEditor): Promise<RoleAccessView> {
  const [flag, role] = await Promise.all([getFeatureFlag(pool, projectId, row.flag_id, editor), roleView(pool, projectId, row.role_id)]);
  return {
    id: row.id,
    feature_flag: flag!,
    role,
    role_id: row.role_id,
    added_at: row.added_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export async function listRoleAccess(
  pool: pg.Pool,
  projectId: number,
  flagId: number,
  page: { limit: number; offset: number },
  editor: FlagEditor,
): Promise<{ count: number; results: RoleAccessView[] }> {
  const { rows } = await pool.query<Row & { total: string }>(
    `SELECT a.*, count(*) OVER () AS total FROM feature_flag_role_access a
      WHERE a.flag_id = $1 ORDER BY a.id LIMIT $2 OFFSET $3`,
    [flagId, page.limit, page.offset],
  );
  const count = rows[0] ? Number(rows[0].total) : (await pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM feature_flag_role_access WHERE flag_id = $1', [flagId])).rows[0]!.n;
  return { count: Number(count), results: await Promise.all(rows.map((r) => toView(pool, projectId, r, editor))) };
}

export async function getRoleAccess(
  pool: pg.Pool,
  projectId: number,
  flagId: number,
  id: number,
  editor: FlagEditor,
): Promise<RoleAccessView | undefined> {
  if (!isDbInteger(flagId) || !isDbInteger(id)) return undefined;
  const { rows } = await pool.query<Row>('SELECT * FROM feature_flag_role_access WHERE flag_id = $1 AND id = $2', [flagId, id]);
  return rows[0] ? toView(pool, projectId, rows[0], editor) : undefined;
}

export async function roleExists(pool: pg.Pool, roleId: string): Promise<boolean> {
  const { rowCount } = await pool.query('SELECT 1 FROM roles WHERE id = $1', [roleId]);
  return (rowCount ?? 0) > 0;
}
