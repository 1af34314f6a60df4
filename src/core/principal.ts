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
