import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api/client.ts';
import { useProjectId } from '../../auth.ts';
import { Empty, Failure, Loading } from '../../states.tsx';

/**
 * Role access (PostHog's legacy per-flag roles): the roles granted editing this flag. With none, everyone with
 * `feature_flag:write` may edit; with some, only their members and project admins may (the flag's `can_edit`).
 */
export function RoleAccess({ flagId, canEdit }: { flagId: number; canEdit: boolean }) {
  const projectId = useProjectId()!;
  const client = useQueryClient();
  const path = { project_id: String(projectId), feature_flag_id: flagId };
  const queryKey = ['feature_flags', projectId, flagId, 'role_access'];
  const list = useQuery({
    queryKey,
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/feature_flags/{feature_flag_id}/role_access/', {
          params: { path, query: { limit: 100 } },
        }),
      ),
  });
  const refresh = () => client.invalidateQueries({ queryKey: ['feature_flags', projectId] });
  const grant = useMutation({
    mutationFn: async (roleId: string) =>
      unwrap(
        await api.POST('/api/projects/{project_id}/feature_flags/{feature_flag_id}/role_access/', {
          params: { path },
          body: { role_id: roleId },
        }),
      ),
    onSuccess: refresh,
  });
  const revoke = useMutation({
    mutationFn: async (id: number) => {
      const { response, error } = await api.DELETE(
        '/api/projects/{project_id}/feature_flags/{feature_flag_id}/role_access/{id}/',
        { params: { path: { ...path, id } } },
      );
      if (!response.ok) unwrap({ error, response });
    },
    onSuccess: refresh,
  });
  const [roleId, setRoleId] = useState('');
  return (
    <section aria-labelledby="roles-title">
      <h2 id="roles-title">Who may edit</h2>
      {list.isPending ? (
        <Loading what="role access" />
      ) : list.isError ? (
        <Failure error={list.error} />
      ) : list.data.results.length === 0 ? (
        <Empty>No roles set: every key with feature_flag:write may edit this flag.</Empty>
      ) : (
        <ul>
          {list.data.results.map((r) => (
            <li key={r.id}>
              {r.role.name}{' '}
              {canEdit && (
                <button type="button" onClick={() => revoke.mutate(r.id)}>
                  Remove {r.role.name}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {revoke.isError && <Failure error={revoke.error} />}
      {canEdit && (
        <form
          class="filters"
          aria-label="Grant a role"
          onSubmit={(e) => {
            e.preventDefault();
            grant.mutate(roleId.trim(), { onSuccess: () => setRoleId('') });
          }}
        >
          <div class="field">
            <label for="role-id">Role id (UUID)</label>
            <input
              id="role-id"
              class="code"
              value={roleId}
              onInput={(e) => setRoleId(e.currentTarget.value)}
            />
          </div>
          <button type="submit">Grant editing</button>
          {grant.isError && <Failure error={grant.error} />}
        </form>
      )}
    </section>
  );
}
