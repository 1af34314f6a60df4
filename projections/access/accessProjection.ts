import { match } from 'ts-pattern';
import { type AccessEvent, accessEventTypes } from '../../commands/access/model/accessEvents.ts';
import { pgProjection } from '../../src/processing/projection.ts';

export const accessProjection = pgProjection<AccessEvent>({
  name: 'access',
  // 2: keys can be updated, rolled (last_rolled_at) and deleted, project keys reset
  version: 2,
  tables: ['projects', 'users', 'project_members', 'personal_api_keys', 'roles', 'role_members'],
  filter: { eventTypes: accessEventTypes },
  schema: `
    CREATE TABLE IF NOT EXISTS projects (
      id integer PRIMARY KEY, name text NOT NULL, api_key_hash text NOT NULL UNIQUE, api_key_mask text NOT NULL,
      created_by_user_id integer NOT NULL, created_at timestamptz NOT NULL);
    CREATE TABLE IF NOT EXISTS users (
      id integer PRIMARY KEY, uuid uuid NOT NULL, distinct_id text NOT NULL, email text NOT NULL UNIQUE,
      first_name text NOT NULL, last_name text NOT NULL, created_at timestamptz NOT NULL);
    CREATE TABLE IF NOT EXISTS project_members (
      project_id integer NOT NULL, user_id integer NOT NULL, level integer NOT NULL, PRIMARY KEY (project_id, user_id));
    CREATE TABLE IF NOT EXISTS personal_api_keys (
      id text PRIMARY KEY, user_id integer NOT NULL, label text NOT NULL, secure_value text NOT NULL UNIQUE,
      mask_value text NOT NULL, scopes text[] NOT NULL, scoped_project_ids integer[], created_at timestamptz NOT NULL,
      last_rolled_at timestamptz);
    CREATE INDEX IF NOT EXISTS personal_api_keys_user ON personal_api_keys (user_id, created_at);
    CREATE TABLE IF NOT EXISTS roles (
      id uuid PRIMARY KEY, name text NOT NULL, feature_flags_access_level integer NOT NULL,
      created_by_user_id integer, created_at timestamptz NOT NULL);
    CREATE TABLE IF NOT EXISTS role_members (
      role_id uuid NOT NULL, user_id integer NOT NULL, added_at timestamptz NOT NULL, PRIMARY KEY (role_id, user_id));
  `,
  async handle(events, tx) {
    for (const event of events) {
      await match(event)
        .with({ type: 'ProjectCreated' }, ({ data: d }) =>
          tx.query(`INSERT INTO projects VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT (id) DO NOTHING`, [
            d.projectId,
            d.name,
            d.apiKeyHash,
            d.apiKeyMask,
            d.createdByUserId,
            d.createdAt,
          ]),
        )
        .with({ type: 'ProjectMemberAdded' }, ({ data: d }) =>
          tx.query(
            `INSERT INTO project_members VALUES ($1,$2,$3) ON CONFLICT (project_id, user_id) DO UPDATE SET level = EXCLUDED.level`,
            [d.projectId, d.userId, d.level],
          ),
        )
        .with({ type: 'UserCreated' }, ({ data: d }) =>
          tx.query(`INSERT INTO users VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT (id) DO NOTHING`, [
            d.userId,
            d.uuid,
            d.distinctId,
            d.email,
            d.firstName,
            d.lastName,
            d.createdAt,
          ]),
        )
        .with({ type: 'PersonalApiKeyCreated' }, ({ data: d }) =>
          tx.query(
            `INSERT INTO personal_api_keys VALUES ($1,$2,$3,$4,$5,$6,$7,$8,NULL) ON CONFLICT (id) DO NOTHING`,
            [
              d.keyId,
              d.userId,
              d.label,
              d.secureValue,
              d.maskValue,
              d.scopes,
              d.scopedProjectIds,
              d.createdAt,
            ],
          ),
        )
        // COALESCE keeps what the update leaves out (an absent field is null here).
        .with({ type: 'PersonalApiKeyUpdated' }, ({ data: d }) =>
          tx.query(
            `UPDATE personal_api_keys SET label = COALESCE($2, label), scopes = COALESCE($3, scopes),
                    scoped_project_ids = CASE WHEN $4 THEN $5::int[] ELSE scoped_project_ids END
              WHERE id = $1`,
            [
              d.keyId,
              d.label ?? null,
              d.scopes ?? null,
              d.scopedProjectIds !== undefined,
              d.scopedProjectIds ?? null,
            ],
          ),
        )
        .with({ type: 'PersonalApiKeyRolled' }, ({ data: d }) =>
          tx.query(
            'UPDATE personal_api_keys SET secure_value = $2, mask_value = $3, last_rolled_at = $4 WHERE id = $1',
            [d.keyId, d.secureValue, d.maskValue, d.rolledAt],
          ),
        )
        .with({ type: 'PersonalApiKeyDeleted' }, ({ data: d }) =>
          tx.query('DELETE FROM personal_api_keys WHERE id = $1', [d.keyId]),
        )
        .with({ type: 'ProjectApiKeyReset' }, ({ data: d }) =>
          tx.query('UPDATE projects SET api_key_hash = $2, api_key_mask = $3 WHERE id = $1', [
            d.projectId,
            d.apiKeyHash,
            d.apiKeyMask,
          ]),
        )
        .with({ type: 'RoleCreated' }, ({ data: d }) =>
          tx.query(`INSERT INTO roles VALUES ($1,$2,$3,$4,$5) ON CONFLICT (id) DO NOTHING`, [
            d.roleId,
            d.name,
            d.featureFlagsAccessLevel,
            d.createdByUserId,
            d.createdAt,
          ]),
        )
        .with({ type: 'RoleMemberAdded' }, ({ data: d }) =>
          tx.query(`INSERT INTO role_members VALUES ($1,$2,$3) ON CONFLICT DO NOTHING`, [
            d.roleId,
            d.userId,
            d.addedAt,
          ]),
        )
        .exhaustive();
    }
  },
});
