import { type DomainError, domainError } from '../../src/core/errors.ts';
import { hasScope, isKnownScope } from '../../src/core/principal.ts';

/** PostHog's MAX_API_KEYS_PER_USER: it also bounds the list, which PostHog does not page. */
export const MAX_PERSONAL_API_KEYS_PER_USER = 10;

/**
 * Who asks for a key through the API: the user and what the key they use may do. null: the
 * operator at the CLI, who may grant anything.
 */
export type KeyGranter = Readonly<{
  userId: number;
  scopes: readonly string[];
  scopedProjectIds: readonly number[] | null;
  /** the projects the caller's key can see (member, and within its own restriction) */
  reachableProjectIds: readonly number[];
}> | null;

/**
 * What a new or patched key may hold. PostHog checks the names and that the user belongs to
 * every project named; it has no scopes on its caller (a logged-in session), hogstream does, so
 * a key cannot hand out more than it holds itself: no scope it lacks, no project it cannot reach.
 */
export function checkGrant(
  granter: KeyGranter,
  scopes: readonly string[] | undefined,
  scopedProjectIds: readonly number[] | null | undefined,
): DomainError | undefined {
  const unknown = scopes?.find((s) => !isKnownScope(s));
  if (unknown !== undefined)
    return domainError('validation', 'invalid_input', `Invalid scope: ${unknown}`, 'scopes');
  if (!granter) return undefined;
  const beyond = scopes?.find((s) =>
    s === '*' ? !granter.scopes.includes('*') : !hasScope(granter.scopes, s),
  );
  if (beyond !== undefined)
    return domainError(
      'forbidden',
      'permission_denied',
      `The key used cannot grant the scope "${beyond}": it does not hold it.`,
    );
  if (scopedProjectIds?.some((id) => !granter.reachableProjectIds.includes(id)))
    return domainError(
      'validation',
      'invalid_input',
      'You must be a member of all teams that you are scoping the key to.',
      'scoped_teams',
    );
  if (scopedProjectIds === null && granter.scopedProjectIds !== null)
    return domainError(
      'forbidden',
      'permission_denied',
      'The key used is limited to some projects: the new key must name them in scoped_teams.',
    );
  return undefined;
}
