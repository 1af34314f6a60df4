import type pg from 'pg';
import type { AuthUser, Principal, ProjectAccess } from '../../src/core/principal.ts';

export type ActivityUser = { id: number; first_name: string; last_name: string; email: string };
/** A user as other read models' views show it (a flag's or a role's creator). */
export type UserRecord = {
  id: number;
  uuid: string;
  distinct_id: string;
  first_name: string;
  last_name: string;
  email: string;
};
/**
 * A role with its creator and members. `members` is kept as Postgres builds it (jsonb, members in
 * the order they were added), since the role view passes it on as JSON text.
 */
export type RoleRecord = {
  id: string;
  name: string;
  feature_flags_access_level: number;
  created_at: Date;
  creator: UserRecord | null;
  members: unknown[];
};

/** A personal API key as its holder may see it: never its value or hash. */
export type PersonalApiKeyRecord = {
  id: string;
  user_id: number;
  label: string;
  mask_value: string;
  scopes: string[];
  scoped_project_ids: number[] | null;
  created_at: Date;
  last_rolled_at: Date | null;
};
const KEY_COLUMNS =
  'id, user_id, label, mask_value, scopes, scoped_project_ids, created_at, last_rolled_at';

/**
 * The only reader of the `access` read model's tables (projects, users, memberships, personal API
 * keys, roles). Authentication, the capture key resolver, commands and queries all go through it.
 */
export type AccessReader = ReturnType<typeof accessReader>;

export const accessReader = (pool: pg.Pool) => ({
  async principalByKeyHash(keyHash: string): Promise<Principal | undefined> {
    const { rows } = await pool.query<
      AuthUser & { key_id: string; scopes: string[]; scoped_project_ids: number[] | null }
    >(
      `SELECT u.id, u.uuid, u.distinct_id, u.first_name, u.last_name, u.email, true AS is_email_verified,
              k.id AS key_id, k.scopes, k.scoped_project_ids
         FROM personal_api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.secure_value = $1`,
      [keyHash],
    );
    const row = rows[0];
    if (!row) return undefined;
    const { key_id, scopes, scoped_project_ids, ...user } = row;
    return { user, keyId: key_id, scopes, scopedProjectIds: scoped_project_ids };
  },

  /** Projects the key may see, in id order: member of the project and, if the key is scoped, listed. */
  async visibleProjects(principal: Principal): Promise<ProjectAccess[]> {
    const { rows } = await pool.query<ProjectAccess>(
      `SELECT p.id, p.name, m.level FROM projects p JOIN project_members m ON m.project_id = p.id
        WHERE m.user_id = $1 AND ($2::int[] IS NULL OR p.id = ANY($2::int[])) ORDER BY p.id`,
      [principal.user.id, principal.scopedProjectIds],
    );
    return rows;
  },

  /** The project whose API key has this sha256, if any. */
  async projectIdByApiKeyHash(keyHash: string): Promise<number | null> {
    const { rows } = await pool.query<{ id: number }>(
      'SELECT id FROM projects WHERE api_key_hash = $1',
      [keyHash],
    );
    return rows[0]?.id ?? null;
  },

  /** A personal API key by the sha256 of its value: its user, scopes and project restriction. */
  async personalKeyByHash(
    keyHash: string,
  ): Promise<{ userId: number; scopes: string[]; scopedProjectIds: number[] | null } | undefined> {
    const { rows } = await pool.query<{
      user_id: number;
      scopes: string[];
      scoped_project_ids: number[] | null;
    }>(
      'SELECT user_id, scopes, scoped_project_ids FROM personal_api_keys WHERE secure_value = $1',
      [keyHash],
    );
    const key = rows[0];
    return (
      key && { userId: key.user_id, scopes: key.scopes, scopedProjectIds: key.scoped_project_ids }
    );
  },

  /** Whether the user belongs to the project and, when the key is scoped, the project is listed. */
  async canReachProject(
    userId: number,
    projectId: number,
    scopedProjectIds: readonly number[] | null,
  ): Promise<boolean> {
    const { rowCount } = await pool.query(
      'SELECT 1 FROM project_members WHERE project_id = $1 AND user_id = $2 AND ($3::int[] IS NULL OR $1 = ANY($3::int[]))',
      [projectId, userId, scopedProjectIds],
    );
    return (rowCount ?? 0) > 0;
  },

  /** The user's keys, newest first (PostHog's order), at most `limit`. */
  async personalKeysOf(userId: number, limit: number): Promise<PersonalApiKeyRecord[]> {
    const { rows } = await pool.query<PersonalApiKeyRecord>(
      `SELECT ${KEY_COLUMNS} FROM personal_api_keys WHERE user_id = $1
        ORDER BY created_at DESC, id LIMIT $2`,
      [userId, limit],
    );
    return rows;
  },

  /** One key of the user (another user's key is not found). */
  async personalKeyOf(userId: number, keyId: string): Promise<PersonalApiKeyRecord | undefined> {
    const { rows } = await pool.query<PersonalApiKeyRecord>(
      `SELECT ${KEY_COLUMNS} FROM personal_api_keys WHERE user_id = $1 AND id = $2`,
      [userId, keyId],
    );
    return rows[0];
  },

  /** Any user's key, for the operator at the CLI. */
  async personalKeyById(keyId: string): Promise<PersonalApiKeyRecord | undefined> {
    const { rows } = await pool.query<PersonalApiKeyRecord>(
      `SELECT ${KEY_COLUMNS} FROM personal_api_keys WHERE id = $1`,
      [keyId],
    );
    return rows[0];
  },

  async personalKeyCount(userId: number): Promise<number> {
    const { rows } = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM personal_api_keys WHERE user_id = $1',
      [userId],
    );
    return rows[0]?.n ?? 0;
  },

  /** Every key, newest first, with its holder's e-mail: the CLI's list (at most `limit`). */
  async allPersonalKeys(
    limit: number,
    userId?: number,
  ): Promise<(PersonalApiKeyRecord & { email: string })[]> {
    const { rows } = await pool.query<PersonalApiKeyRecord & { email: string }>(
      `SELECT k.id, k.user_id, k.label, k.mask_value, k.scopes, k.scoped_project_ids, k.created_at,
              k.last_rolled_at, u.email
         FROM personal_api_keys k JOIN users u ON u.id = k.user_id
        WHERE $2::int IS NULL OR k.user_id = $2 ORDER BY k.created_at DESC, k.id LIMIT $1`,
      [limit, userId ?? null],
    );
    return rows;
  },

  async projectExists(projectId: number): Promise<boolean> {
    const { rowCount } = await pool.query('SELECT 1 FROM projects WHERE id = $1', [projectId]);
    return (rowCount ?? 0) > 0;
  },

  /** The lowest project id, or undefined before the first project exists. */
  async firstProjectId(): Promise<number | undefined> {
    const { rows } = await pool.query<{ id: number }>(
      'SELECT id FROM projects ORDER BY id LIMIT 1',
    );
    return rows[0]?.id;
  },

  async userIdByEmail(email: string): Promise<number | undefined> {
    const { rows } = await pool.query<{ id: number }>(
      'SELECT id FROM users WHERE lower(email) = lower($1)',
      [email],
    );
    return rows[0]?.id;
  },

  /** Users by id, for activity entries (missing ids are left out). */
  async activityUsers(ids: readonly number[]): Promise<Map<number, ActivityUser>> {
    const { rows } = await pool.query<ActivityUser>(
      'SELECT id, first_name, last_name, email FROM users WHERE id = ANY($1::int[])',
      [ids],
    );
    return new Map(rows.map((u) => [u.id, u]));
  },

  /** The roles the user is a member of, with their feature-flag access level (21 view, 37 edit). */
  async roleLevelsOf(userId: number): Promise<Map<string, number>> {
    const { rows } = await pool.query<{ id: string; level: number }>(
      `SELECT r.id, r.feature_flags_access_level AS level
         FROM role_members m JOIN roles r ON r.id = m.role_id WHERE m.user_id = $1`,
      [userId],
    );
    return new Map(rows.map((r) => [r.id, r.level]));
  },

  async roleExists(roleId: string): Promise<boolean> {
    const { rowCount } = await pool.query('SELECT 1 FROM roles WHERE id = $1', [roleId]);
    return (rowCount ?? 0) > 0;
  },

  /** Users by id, for the `created_by` of views (missing ids are left out). */
  async usersById(ids: readonly number[]): Promise<Map<number, UserRecord>> {
    const { rows } = await pool.query<UserRecord>(
      'SELECT id, uuid, distinct_id, first_name, last_name, email FROM users WHERE id = ANY($1::int[])',
      [ids],
    );
    return new Map(rows.map((u) => [u.id, u]));
  },

  /** A role with its creator and its members (each `{user, added_at}`, by time added). */
  async roleWithMembers(roleId: string): Promise<RoleRecord | undefined> {
    const { rows } = await pool.query<RoleRecord>(
      `SELECT r.id, r.name, r.feature_flags_access_level, r.created_at,
              CASE WHEN u.id IS NULL THEN NULL
                   ELSE jsonb_build_object('id', u.id, 'uuid', u.uuid, 'distinct_id', u.distinct_id,
                                           'first_name', u.first_name, 'last_name', u.last_name, 'email', u.email) END AS creator,
              COALESCE((SELECT jsonb_agg(jsonb_build_object('user', to_jsonb(mu.*) - 'created_at', 'added_at', m.added_at) ORDER BY m.added_at)
                          FROM role_members m JOIN users mu ON mu.id = m.user_id WHERE m.role_id = r.id), '[]') AS members
         FROM roles r LEFT JOIN users u ON u.id = r.created_by_user_id WHERE r.id = $1`,
      [roleId],
    );
    return rows[0];
  },
});
