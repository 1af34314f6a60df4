import type { FastifyInstance, FastifyRequest } from 'fastify';
import type pg from 'pg';
import { hashKey } from '../core/keys.ts';
import { invalidPersonalApiKey, notFoundError, permissionDenied } from './apiError.ts';

export type AuthUser = Readonly<{
  id: number;
  uuid: string;
  distinct_id: string;
  first_name: string;
  last_name: string;
  email: string;
  is_email_verified: boolean;
}>;

export type Principal = Readonly<{
  user: AuthUser;
  keyId: string;
  scopes: readonly string[];
  scopedProjectIds: readonly number[] | null;
}>;

export type ProjectAccess = Readonly<{ id: number; name: string; level: number }>;

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
    project?: ProjectAccess;
  }
  interface FastifyContextConfig {
    /** the personal API key scope the route needs, e.g. "feature_flag:read" */
    scope?: string;
  }
}

/** `x:write` includes `x:read`; `*` is every scope. */
export const hasScope = (scopes: readonly string[], needed: string) => {
  const [object, action] = needed.split(':');
  return scopes.some((s) => s === '*' || s === needed || (action === 'read' && s === `${object}:write`));
};

async function authenticate(pool: pg.Pool, header: string | undefined): Promise<Principal> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) throw invalidPersonalApiKey('Authentication credentials were not provided: send "Authorization: Bearer <personal API key>".');
  const { rows } = await pool.query<AuthUser & { key_id: string; scopes: string[]; scoped_project_ids: number[] | null }>(
    `SELECT u.id, u.uuid, u.distinct_id, u.first_name, u.last_name, u.email, true AS is_email_verified,
            k.id AS key_id, k.scopes, k.scoped_project_ids
       FROM personal_api_keys k JOIN users u ON u.id = k.user_id
      WHERE k.secure_value = $1`,
    [hashKey(match[1]!)],
  );
  const row = rows[0];
  if (!row) throw invalidPersonalApiKey();
  const { key_id, scopes, scoped_project_ids, ...user } = row;
  return { user, keyId: key_id, scopes, scopedProjectIds: scoped_project_ids };
}

/** Projects the key may see, in id order: member of the project and, if the key is scoped, listed. */
export async function visibleProjects(pool: pg.Pool, principal: Principal): Promise<ProjectAccess[]> {
  const { rows } = await pool.query<ProjectAccess>(
    `SELECT p.id, p.name, m.level FROM projects p JOIN project_members m ON m.project_id = p.id
      WHERE m.user_id = $1 AND ($2::int[] IS NULL OR p.id = ANY($2::int[])) ORDER BY p.id`,
    [principal.user.id, principal.scopedProjectIds],
  );
  return rows;
}

async function resolveProject(pool: pg.Pool, principal: Principal, raw: string): Promise<ProjectAccess> {
  const projects = await visibleProjects(pool, principal);
  const found = raw === '@current' ? projects[0] : projects.find((p) => String(p.id) === raw);
  if (!found) throw notFoundError('Project not found.');
  return found;
}

/**
 * Every /api route needs a personal API key. Authentication runs on request, before the body is
 * validated, so an anonymous caller learns nothing about the payload rules.
 */
export function installAuth(app: FastifyInstance, pool: pg.Pool): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    // Decide by the matched route, not the raw URL: the router decodes "/%61pi/..." to "/api/...".
    const route = request.routeOptions.url ?? '';
    if (!route.startsWith('/api/') || route.startsWith('/api/schema')) return;
    if (request.method === 'OPTIONS') return;
    const principal = await authenticate(pool, request.headers.authorization);
    request.principal = principal;
    const scope = request.routeOptions.config?.scope;
    if (scope && !hasScope(principal.scopes, scope)) {
      throw permissionDenied(`API key missing required scope '${scope}'`);
    }
    const projectId = (request.params as Record<string, string> | undefined)?.project_id;
    if (projectId !== undefined) request.project = await resolveProject(pool, principal, projectId);
  });
}
