/**
 * Every operation of the OpenAPI document gets an `operationId`, named from its method and path
 * the way PostHog's document names them (drf-spectacular over DRF viewsets), so a client generated
 * from either calls the same things by the same names:
 *
 *   GET    /api/projects/{project_id}/feature_flags/               feature_flags_list
 *   POST   /api/projects/{project_id}/feature_flags/               feature_flags_create
 *   GET    /api/projects/{project_id}/feature_flags/{id}/          feature_flags_retrieve
 *   PATCH  /api/projects/{project_id}/feature_flags/{id}/          feature_flags_partial_update
 *   DELETE /api/projects/{project_id}/feature_flags/{id}/          feature_flags_destroy
 *   GET    /api/projects/{project_id}/feature_flags/{id}/activity/ feature_flags_activity_retrieve
 *   GET    /api/projects/{project_id}/feature_flags/{feature_flag_id}/role_access/
 *                                                                  feature_flags_role_access_list
 *   POST   /decide/                                                decide_create
 *
 * The name is the path's literal segments after the project (or `/api/`, or `/`) joined by `_`,
 * then the action. A GET or POST is a collection's `list`/`create` when its last segment is a
 * resource under /api: the first one, or one nested under a parent's id (`{feature_flag_id}`, as
 * DRF's nested routers name it). After `{id}` or another literal it is a custom action
 * (`retrieve`/`create`), as are the public routes (capture, /decide, /flags). A name already
 * taken gets `_2`, `_3`… in path order, as drf-spectacular resolves collisions. A route that
 * sets `schema.operationId` keeps it.
 */

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

const DETAIL_ACTIONS: Readonly<Record<string, string>> = {
  get: 'retrieve',
  put: 'update',
  patch: 'partial_update',
  delete: 'destroy',
  post: 'create',
};

const PREFIXES = [/^\/api\/(?:projects|environments)\/\{[^}]+\}\//, /^\/api\//, /^\//];

type Operation = { operationId?: string };
type Paths = Record<string, Partial<Record<string, Operation>> | undefined>;

/** The document with an `operationId` on every operation, unique across it. */
export function withOperationIds<T extends { paths?: object | undefined }>(document: T): T {
  const taken = new Set<string>();
  // Numbered in path order (drf-spectacular sorts so), not route order: registering routes in
  // another order renames nothing. `{` sorts after letters, so `feature_flags/activity/` is
  // `…_activity_retrieve` and `feature_flags/{id}/activity/` `…_activity_retrieve_2`, as PostHog's.
  const operations = Object.entries((document.paths ?? {}) as Paths)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap(([path, item]) =>
      METHODS.flatMap((method) => (item?.[method] ? [{ path, method, op: item[method] }] : [])),
    );
  for (const { op } of operations) if (op.operationId) taken.add(op.operationId);
  for (const { path, method, op } of operations) {
    if (op.operationId) continue;
    const base = operationName(method, path);
    let id = base;
    for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
    taken.add(id);
    op.operationId = id;
  }
  return document;
}

/** PostHog's name for an operation (before collisions are numbered). */
export function operationName(method: string, path: string): string {
  const prefix = PREFIXES.find((p) => p.test(path)) ?? /^/;
  const segments = path.replace(prefix, '').split('/').filter(Boolean);
  const tokens = segments
    .filter((s) => !isParam(s))
    .map((s) => s.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, ''))
    .filter(Boolean);
  const last = segments.at(-1);
  const beforeLast = segments.at(-2);
  const isCollection =
    path.startsWith('/api/') &&
    last !== undefined &&
    !isParam(last) &&
    (beforeLast === undefined || (isParam(beforeLast) && beforeLast !== '{id}'));
  const action =
    isCollection && method === 'get'
      ? 'list'
      : (DETAIL_ACTIONS[method] ?? method.replace(/[^a-z]/g, ''));
  return [...tokens, action].join('_');
}

const isParam = (segment: string) => segment.startsWith('{') && segment.endsWith('}');
