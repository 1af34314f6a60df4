import type pg from 'pg';
import { hashKey } from '../../src/core/keys.ts';
import { type CaptureFailure, invalidApiKey, invalidPersonalApiKey, invalidProject } from './captureFailure.ts';

export type ProjectResolution = { ok: true; projectId: number } | CaptureFailure;

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
    if (!key) return invalidPersonalApiKey();
    const projectId =
      typeof projectIdField === 'number' ? projectIdField
        : typeof projectIdField === 'string' && /^\d{1,9}$/.test(projectIdField) ? Number(projectIdField)
          : NaN;
    if (!Number.isInteger(projectId) || projectId > 2 ** 31 - 1) return invalidProject();
    const member = await pool.query(
      'SELECT 1 FROM project_members WHERE project_id = $1 AND user_id = $2 AND ($3::int[] IS NULL OR $1 = ANY($3::int[]))',
      [projectId, key.user_id, key.scoped_project_ids],
    );
    return member.rowCount ? { ok: true, projectId } : invalidProject();
  }

  return async function resolveProject(token: string, projectIdField: unknown): Promise<ProjectResolution> {
    if (token.startsWith('phx_')) return byPersonalKey(token, projectIdField);
    const projectId = await byProjectKey(token);
    return projectId === null ? invalidApiKey() : { ok: true, projectId };
  };
}
export type ResolveProject = ReturnType<typeof createProjectResolver>;
