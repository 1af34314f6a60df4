/** Who calls the REST API: the user behind a personal API key, and what the key allows. */
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

/** A project the principal can see, with its membership level (1 member, 8 admin, 15 owner). */
export type ProjectAccess = Readonly<{ id: number; name: string; level: number }>;

/** `x:write` includes `x:read`; `*` is every scope. */
export const hasScope = (scopes: readonly string[], needed: string) => {
  const [object, action] = needed.split(':');
  return scopes.some(
    (s) => s === '*' || s === needed || (action === 'read' && s === `${object}:write`),
  );
};

/**
 * PostHog's personal API key scope objects (`<object>:read` / `<object>:write`); a key may hold
 * any of them, though this server checks only the ones its routes need.
 */
export const SCOPE_OBJECTS = [
  'action',
  'activity_log',
  'annotation',
  'batch_export',
  'cohort',
  'dashboard',
  'dashboard_template',
  'early_access_feature',
  'event',
  'event_definition',
  'experiment',
  'export',
  'feature_flag',
  'group',
  'hog_function',
  'insight',
  'notebook',
  'organization',
  'organization_member',
  'person',
  // Not in today's PostHog list (its key routes take only a logged-in session there, which
  // hogstream has none of); older PostHog named it so: docs/DECISIONS.md, "Key management".
  'personal_api_key',
  'plugin',
  'project',
  'property_definition',
  'query',
  'session_recording',
  'session_recording_playlist',
  'sharing_configuration',
  'subscription',
  'survey',
  'user',
  'webhook',
] as const;

/** `*`, or a known object with `:read` or `:write`. */
export const isKnownScope = (scope: string): boolean => {
  if (scope === '*') return true;
  const [object, action, ...rest] = scope.split(':');
  return (
    rest.length === 0 &&
    (action === 'read' || action === 'write') &&
    (SCOPE_OBJECTS as readonly string[]).includes(object ?? '')
  );
};
