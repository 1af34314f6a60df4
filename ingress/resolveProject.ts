import type { AccessReader } from '../projections/access/accessReader.ts';
import { hashKey } from '../src/core/keys.ts';
import { hasScope } from '../src/core/principal.ts';
import {
  CAPTURE_SCOPE,
  type CaptureFailure,
  invalidApiKey,
  invalidPersonalApiKey,
  invalidProject,
  missingCaptureScope,
} from './ingressErrors.ts';

export type ProjectResolution = { ok: true; projectId: number } | CaptureFailure;

/** The facts of the access read model that capture needs to accept a token. */
export type CaptureAccess = Pick<
  AccessReader,
  'projectIdByApiKeyHash' | 'personalKeyByHash' | 'canReachProject'
>;

/** Every resolver's cache in this process (capture's, /decide's, each test service's). */
const projectKeyCaches = new Set<Map<string, unknown>>();
/** bumped by each forget: a lookup that started before it must not cache what it read */
let forgets = 0;

/**
 * Forgets every cached token → project of this process: a project key was reset (reset_token),
 * so the old key must stop working at once rather than when its entry expires. Resets are rare;
 * emptying the caches costs each live key one lookup.
 */
export function forgetCachedProjectKeys(): void {
  forgets++;
  for (const cache of projectKeyCaches) cache.clear();
}

/**
 * Token → project, with a short-lived cache: capture is the hottest path and keys rarely change.
 * Misses are cached briefly too, so a flood with a bad key does not reach Postgres each time, yet
 * a project created by the CLI is usable within a second. A reset forgets the cache
 * (`forgetCachedProjectKeys`); the TTL bounds how long a reset this process missed can go unseen.
 */
export function createProjectResolver(
  access: CaptureAccess,
  ttlMs = 30_000,
  missTtlMs = 1_000,
  /** what a personal API key must hold (capture: event:write; /decide: feature_flag:read) */
  scope = CAPTURE_SCOPE,
) {
  const cache = new Map<string, { projectId: number | null; until: number }>();
  projectKeyCaches.add(cache);

  // Keyed by the project API key itself (public: every page embedding posthog-js carries it), so
  // a hit costs no hash; only the hash reaches the database.
  async function byProjectKey(token: string): Promise<number | null> {
    const hit = cache.get(token);
    if (hit && hit.until > Date.now()) return hit.projectId;
    const startedAt = forgets;
    const projectId = await access.projectIdByApiKeyHash(hashKey(token));
    if (startedAt !== forgets) return projectId;
    if (cache.size > 10_000) cache.clear();
    cache.set(token, { projectId, until: Date.now() + (projectId === null ? missTtlMs : ttlMs) });
    return projectId;
  }

  /** A personal API key may capture into a project it can see, named by `project_id` in the body. */
  async function byPersonalKey(token: string, projectIdField: unknown): Promise<ProjectResolution> {
    const key = await access.personalKeyByHash(hashKey(token));
    if (!key) return invalidPersonalApiKey();
    if (!hasScope(key.scopes, scope)) return missingCaptureScope(scope);
    const projectId =
      typeof projectIdField === 'number'
        ? projectIdField
        : typeof projectIdField === 'string' && /^\d{1,9}$/.test(projectIdField)
          ? Number(projectIdField)
          : NaN;
    if (!Number.isInteger(projectId) || projectId > 2 ** 31 - 1) return invalidProject();
    return (await access.canReachProject(key.userId, projectId, key.scopedProjectIds))
      ? { ok: true, projectId }
      : invalidProject();
  }

  return async function resolveProject(
    token: string,
    projectIdField: unknown,
  ): Promise<ProjectResolution> {
    if (token.startsWith('phx_')) return byPersonalKey(token, projectIdField);
    const projectId = await byProjectKey(token);
    return projectId === null ? invalidApiKey() : { ok: true, projectId };
  };
}
export type ResolveProject = ReturnType<typeof createProjectResolver>;
