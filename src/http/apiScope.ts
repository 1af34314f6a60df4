import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import {
  fail,
  forbidden,
  invalidInput,
  notFound,
  required,
  throttled,
  unauthenticated,
} from '../core/errors.ts';
import { hashKey } from '../core/keys.ts';
import { hasScope, type Principal, type ProjectAccess } from '../core/principal.ts';
import { storableValue } from '../core/storable.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
    project?: ProjectAccess;
  }
  interface FastifyContextConfig {
    /** the personal API key scope the route needs, e.g. "feature_flag:read" */
    scope?: string;
    /**
     * The project comes from the project API key in `?token=` (or `?api_key=`) instead of a
     * `:project_id` parameter (local evaluation, posthog-node's URLs); the key must reach it. A
     * route with a `:project_id` too takes the token's project when a token is sent (remote config).
     */
    projectFromToken?: boolean;
  }
}

/** What authentication needs from the access read model; the composition root passes its reader. */
export type AuthLookup = Readonly<{
  /** the key's user and scopes, by the sha256 of the key */
  principalByKeyHash(keyHash: string): Promise<Principal | undefined>;
  /** projects the key may see, in id order */
  visibleProjects(principal: Principal): Promise<ProjectAccess[]>;
  /** the project whose project API key has this sha256 */
  projectIdByApiKeyHash(keyHash: string): Promise<number | null>;
}>;

const invalidKey = (
  detail = 'Personal API key found in request Authorization header is invalid.',
) => unauthenticated('invalid_personal_api_key', detail);

/** The key of `Authorization: Bearer <key>` as authentication reads it (any case, extra spaces). */
export function bearerKey(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
}

async function authenticate(auth: AuthLookup, header: string | undefined): Promise<Principal> {
  const key = bearerKey(header);
  if (!key)
    fail(
      invalidKey(
        'Authentication credentials were not provided: send "Authorization: Bearer <personal API key>".',
      ),
    );
  return (await auth.principalByKeyHash(hashKey(key))) ?? fail(invalidKey());
}

async function resolveProject(
  auth: AuthLookup,
  principal: Principal,
  raw: string,
): Promise<ProjectAccess> {
  const projects = await auth.visibleProjects(principal);
  const found = raw === '@current' ? projects[0] : projects.find((p) => String(p.id) === raw);
  return found ?? fail(notFound('Project not found.'));
}

/**
 * The project of `?token=` (posthog-node sends its project API key there). An unknown token is
 * 401 `invalid_api_key`, as capture answers it (posthog-node backs off on 401 and keeps its
 * flags); a project the personal key cannot reach is 403, which it treats the same way.
 */
async function projectOfToken(
  auth: AuthLookup,
  principal: Principal,
  query: unknown,
): Promise<ProjectAccess> {
  const q = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>;
  const token = [q.token, q.api_key].find((v) => typeof v === 'string' && v !== '');
  if (typeof token !== 'string') fail(required('token'));
  const projectId = await auth.projectIdByApiKeyHash(hashKey(token));
  if (projectId === null)
    fail(
      unauthenticated(
        'invalid_api_key',
        'Project API key invalid. You can find your project API key in your project settings.',
      ),
    );
  const project = (await auth.visibleProjects(principal)).find((p) => p.id === projectId);
  return project ?? fail(forbidden('The personal API key cannot reach the project of this token.'));
}

function hasToken(query: unknown): boolean {
  const q = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>;
  return [q.token, q.api_key].some((v) => typeof v === 'string' && v !== '');
}

export type ApiLimits = Readonly<{
  /** requests per minute per personal API key (per client address without one); 0 turns it off */
  requestsPerMinute: number;
  /** requests per minute per client address, whatever their key (or none); 0 turns it off */
  requestsPerMinutePerAddress: number;
}>;

/**
 * The limits of the `/api/` scope, in an `onRequest` hook added before authentication's, so a
 * refused or anonymous request is counted too (the plugin's own per-route hooks would run after
 * the scope's). The address limit comes first: rotating bad keys fills no key's budget. A key is
 * counted by its hash, as authentication reads it, so `bearer k` and `Bearer  k ` are the same key.
 */
async function installApiRateLimits(app: FastifyInstance, limits: ApiLimits): Promise<void> {
  if (limits.requestsPerMinute <= 0 && limits.requestsPerMinutePerAddress <= 0) return;
  await app.register(rateLimit, { global: false, timeWindow: 60_000 });
  const limiters = [
    ...(limits.requestsPerMinutePerAddress > 0
      ? [
          app.createRateLimit({
            max: limits.requestsPerMinutePerAddress,
            keyGenerator: (request) => `ip:${request.ip}`,
          }),
        ]
      : []),
    ...(limits.requestsPerMinute > 0
      ? [
          app.createRateLimit({
            max: limits.requestsPerMinute,
            keyGenerator: (request) => {
              const key = bearerKey(request.headers.authorization);
              return key ? `key:${hashKey(key)}` : `anonymous:${request.ip}`;
            },
          }),
        ]
      : []),
  ];
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method === 'OPTIONS') return;
    for (const limiter of limiters) {
      const limit = await limiter(request);
      if (limit.isAllowed || !limit.isExceeded) continue;
      void reply.header('retry-after', String(limit.ttlInSeconds));
      fail(
        throttled(`Request was throttled. Expected available in ${limit.ttlInSeconds} seconds.`),
      );
    }
  });
}

/**
 * The `/api/` scope: every route registered in it needs a personal API key with the route's
 * `config.scope`, and a route with a `:project_id` parameter (or `config.projectFromToken`) a
 * project the key can see. Routes outside `/api/` that need the same (`/flags/definitions`) are
 * registered here too. It runs on request, before the body is validated, so an anonymous
 * caller learns nothing about the payload rules. Routes read the caller with `principalOf` and `projectOf`.
 */
export const apiScope =
  (
    auth: AuthLookup,
    routes: readonly FastifyPluginAsync[],
    limits: ApiLimits,
  ): FastifyPluginAsync =>
  async (app: FastifyInstance) => {
    await installApiRateLimits(app, limits);
    // Every body, whatever parsed it (JSON, a route's multipart), is stored as capture stores it:
    // NUL and lone surrogates as U+FFFD (src/core/storable.ts), before any route sees it. Path and
    // query parameters are lookups, not values to keep: Postgres text cannot take a NUL there, so a
    // parameter carrying one is the caller's mistake, named as such.
    app.addHook('preValidation', async (request: FastifyRequest) => {
      if (request.body !== undefined) request.body = storableValue(request.body);
      for (const source of [request.query, request.params]) {
        if (typeof source !== 'object' || source === null) continue;
        for (const [name, value] of Object.entries(source)) {
          const values = Array.isArray(value) ? value : [value];
          if (values.some((v) => typeof v === 'string' && v.includes('\0'))) {
            fail(invalidInput('NUL characters are not allowed.', name));
          }
        }
      }
    });
    app.addHook('onRequest', async (request: FastifyRequest) => {
      if (request.method === 'OPTIONS') return;
      const principal = await authenticate(auth, request.headers.authorization);
      request.principal = principal;
      const scope = request.routeOptions.config?.scope;
      if (scope && !hasScope(principal.scopes, scope))
        fail(forbidden(`API key missing required scope '${scope}'`));
      const projectId = (request.params as Record<string, string> | undefined)?.project_id;
      const fromToken = request.routeOptions.config?.projectFromToken === true;
      // A route with both takes the token's project when a token is sent, as PostHog's routing does.
      if (projectId !== undefined && !(fromToken && hasToken(request.query)))
        request.project = await resolveProject(auth, principal, projectId);
      else if (fromToken) request.project = await projectOfToken(auth, principal, request.query);
    });
    for (const slice of routes) await app.register(slice);
  };

/** The authenticated caller of an `/api/` route. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal)
    throw new Error(`${request.routeOptions.url ?? request.url} is not inside the /api/ scope`);
  return request.principal;
}

/** The project named by `:project_id` of an `/api/` route, as the caller may see it. */
export function projectOf(request: FastifyRequest): ProjectAccess {
  if (!request.project)
    throw new Error(
      `${request.routeOptions.url ?? request.url} has no :project_id inside the /api/ scope`,
    );
  return request.project;
}
