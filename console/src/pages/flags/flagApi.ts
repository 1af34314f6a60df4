import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Schemas, unwrap } from '../../api/client.ts';
import { allows, useCurrentKey, useProjectId, useSessionKey } from '../../auth.ts';

export type Flag = Schemas['FeatureFlag'];
export type ActivityEntry = Schemas['ActivityLogEntry'];

/** Every read of a flag shares this prefix, so one invalidation after an edit refreshes list, detail and history. */
export const flagKeys = {
  all: (projectId: number) => ['feature_flags', projectId] as const,
  one: (projectId: number, id: number, asOf?: string) =>
    ['feature_flags', projectId, id, asOf ?? 'now'] as const,
};

const path = (projectId: number) => ({ project_id: String(projectId) });

/** The list is bounded by the API's page (limit 100 here; the API allows up to 1000). */
export const LIST_LIMIT = 100;

export function useFlagList(offset: number) {
  const projectId = useProjectId()!;
  return useQuery({
    queryKey: [...flagKeys.all(projectId), 'list', offset],
    placeholderData: (previous) => previous,
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/feature_flags/', {
          params: { path: path(projectId), query: { limit: LIST_LIMIT, offset } },
        }),
      ),
  });
}

/** The flag now, or as of a past moment (the API folds the flag's stream up to `as_of`). */
export function useFlag(id: number, asOf?: string) {
  const projectId = useProjectId()!;
  return useQuery({
    queryKey: flagKeys.one(projectId, id, asOf),
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/feature_flags/{id}/', {
          params: { path: { ...path(projectId), id }, query: asOf ? { as_of: asOf } : {} },
        }),
      ),
  });
}

export const HISTORY_LIMIT = 50;

export function useFlagHistory(id: number, offset: number) {
  const projectId = useProjectId()!;
  return useQuery({
    queryKey: [...flagKeys.all(projectId), id, 'activity', offset],
    placeholderData: (previous) => previous,
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/feature_flags/{id}/activity/', {
          params: { path: { ...path(projectId), id }, query: { limit: HISTORY_LIMIT, offset } },
        }),
      ),
  });
}

/** Whether the signed-in key may write flags (PostHog's `feature_flag:write`); the flag's `can_edit` adds roles. */
export function useCanWriteFlags(): boolean {
  const current = useCurrentKey(useSessionKey());
  return current.data ? allows(current.data.scopes, 'feature_flag:write') : false;
}

export type FlagInput = Schemas['FeatureFlagCreateInput'];

/** Create (no id) or patch a flag; the list, the flag and its history are read again afterwards. */
export function useSaveFlag(id: number | null) {
  const projectId = useProjectId()!;
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (input: FlagInput) =>
      id === null
        ? unwrap(
            await api.POST('/api/projects/{project_id}/feature_flags/', {
              params: { path: path(projectId) },
              body: input,
            }),
          )
        : unwrap(
            await api.PATCH('/api/projects/{project_id}/feature_flags/{id}/', {
              params: { path: { ...path(projectId), id } },
              body: input,
            }),
          ),
    onSuccess: () => client.invalidateQueries({ queryKey: flagKeys.all(projectId) }),
  });
}

/** The project's group types (at most 5, PostHog's limit), so a group flag is chosen by name. */
export function useGroupTypes() {
  const projectId = useProjectId()!;
  return useQuery({
    queryKey: ['groups_types', projectId],
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/groups_types/', {
          params: { path: path(projectId) },
        }),
      ),
  });
}
