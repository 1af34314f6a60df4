import type pg from 'pg';
import { hashKey } from '../../src/core/keys.ts';

export type ProjectResolution =
  | { ok: true; projectId: number }
  | { ok: false; status: 400 | 401; type: string; code: string; detail: string; attr: string | null };

const invalidApiKey = {
  ok: false, status: 401, type: 'authentication_error', code: 'invalid_api_key',
  detail: 'Project API key invalid. You can find your project API key in PostHog project settings.', attr: null,
} as const;

/**
 * Token → project, with a short-lived cache: capture is the hottest path and keys rarely change.
 * Misses are cached briefly too, so a flood with a bad key does not reach Postgres each time, yet
 * a project created by the CLI is usable within a second.
 */
export function createProjectResolver(pool: pg.Pool, ttlMs = 30_000, missTtlMs = 1_000) {
  const cache = new Map<string, { projectId: number | null; until: number }>();

  async function byProjectKey(token: string): Promise<number | null> {
    const hash = hashKey(token);
    const hit = cache.get(hash);
    if (hit && hit.until > Date.now()) return hit.projectId;
    const { rows } = await pool.query<{ id: number }>('SELECT id FROM projects WHERE api_key_hash = $1', [hash]);
    const projectId = rows[0]?.id ?? null;
    if (cache.size > 10_000) cache.clear();
    cache.set(hash, { projectId, until: Date.now() + (projectId === null ? missTtlMs : ttlMs) });
    return projectId;
  }

  /** A personal API key may capture into a project it can see, named by `project_id` in the body. */
  async function byPersonalKey(token: string, projectIdField: unknown): Promise<ProjectResolution> {
    const { rows } = await pool.query<{ user_id: number; scoped_project_ids: number[] | null }>(
      'SELECT user_id, scoped_project_ids FROM personal_api_keys WHERE secure_value = $1',
      [hashKey(token)],
    );
    const key = rows[0];
    if (!key) return { ok: false, status: 401, type: 'authentication_error', code: 'invalid_personal_api_key', detail: 'Invalid Personal API key.', attr: null };
    const projectId = typeof projectIdField === 'number' ? projectIdField : typeof projectIdField === 'string' && /^\d+$/.test(projectIdField) ? Number(projectIdField) : NaN;
    const invalidProject = { ok: false, status: 400, type: 'validation_error', code: 'invalid_project', detail: 'Invalid Project ID.', attr: 'project_id' } as const;
    if (!Number.isInteger(projectId)) return invalidProject;
    const member = await pool.query(
      'SELECT 1 FROM project_members WHERE project_id = $1 AND user_id = $2 AND ($3::int[] IS NULL OR $1 = ANY($3::int[]))',
      [projectId, key.user_id, key.scoped_project_ids],
    );
    return member.rowCount ? { ok: true, projectId } : invalidProject;
  }

  return async function resolveProject(token: string | undefined, projectIdField: unknown): Promise<ProjectResolution> {
    if (!token) {
      return { ok: false, status: 401, type: 'authentication_error', code: 'missing_api_key', detail: 'API key not provided. You can find your project API key in PostHog project settings.', attr: null };
    }
    if (token.startsWith('phx_')) return byPersonalKey(token, projectIdField);
    const projectId = await byProjectKey(token);
    return projectId === null ? invalidApiKey : { ok: true, projectId };
  };
}
export type ResolveProject = ReturnType<typeof createProjectResolver>;
