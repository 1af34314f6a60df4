import { useQuery } from '@tanstack/react-query';
import { useSyncExternalStore } from 'preact/compat';
import { api, unwrap } from './api/client.ts';
import { session } from './session.ts';

export const useSessionKey = () => useSyncExternalStore(session.subscribe, session.key);
export const useProjectId = () => useSyncExternalStore(session.subscribe, session.projectId);

/** The signed-in key as the server knows it (`personal_api_keys/@current/`): its label and scopes. */
export const useCurrentKey = (key: string | null) =>
  useQuery({
    queryKey: ['personal_api_keys', '@current', key],
    enabled: key !== null,
    retry: false,
    queryFn: async () =>
      unwrap(
        await api.GET('/api/personal_api_keys/{id}/', { params: { path: { id: '@current' } } }),
      ),
  });

/**
 * PostHog's scope rule: `*` holds everything, `x:write` implies `x:read`. The console hides what the key cannot do;
 * the API refuses it anyway.
 */
export function allows(scopes: readonly string[], needed: string): boolean {
  if (scopes.includes('*') || scopes.includes(needed)) return true;
  const [object, action] = needed.split(':');
  return action === 'read' && scopes.includes(`${object}:write`);
}
