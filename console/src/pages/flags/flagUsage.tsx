import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client.ts';
import { useProjectId } from '../../auth.ts';
import { Empty, Failure, Loading } from '../../states.tsx';
import type { Flag } from './flagApi.ts';
import { type Series, UsageChart } from './usageChart.tsx';

/**
 * The flag's usage dashboard (PostHog's template: `$feature_flag_called` volume and unique users by response, and
 * with enrichment the events carrying `$feature/<key>`), computed by the API when the dashboard is read.
 */
export function FlagUsage({ flag, canEdit }: { flag: Flag; canEdit: boolean }) {
  const projectId = useProjectId()!;
  const client = useQueryClient();
  const flagPath = { project_id: String(projectId), id: flag.id };
  const dashboardId = flag.usage_dashboard;
  const dashboard = useQuery({
    queryKey: ['feature_flags', projectId, flag.id, 'usage', dashboardId],
    enabled: dashboardId !== null,
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/dashboards/{id}/', {
          params: { path: { project_id: String(projectId), id: dashboardId! } },
        }),
      ),
  });
  const refresh = () => client.invalidateQueries({ queryKey: ['feature_flags', projectId] });
  const create = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/api/projects/{project_id}/feature_flags/{id}/dashboard/', {
          params: { path: flagPath },
          body: {},
        }),
      ),
    onSuccess: refresh,
  });
  const enrich = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/api/projects/{project_id}/feature_flags/{id}/enrich_usage_dashboard/', {
          params: { path: flagPath },
          body: {},
        }),
      ),
    onSuccess: refresh,
  });
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Usage (last 30 days)</h2>
      {dashboardId === null ? (
        <Empty>
          This flag has no usage dashboard yet.{' '}
          {canEdit && (
            <button type="button" disabled={create.isPending} onClick={() => create.mutate()}>
              Create usage dashboard
            </button>
          )}
        </Empty>
      ) : dashboard.isPending ? (
        <Loading what="the usage dashboard" />
      ) : dashboard.isError ? (
        <Failure error={dashboard.error} />
      ) : (
        <div class="usage">
          {dashboard.data.tiles.map((tile) => {
            const insight = tile.insight;
            const result = insight && 'result' in insight ? insight.result : [];
            const series: Series[] = (Array.isArray(result) ? result : []).map((r) => ({
              label: r.breakdown_value ?? r.label,
              days: r.days.map(String),
              data: r.data,
            }));
            return series.length === 0 ? (
              <p key={tile.id} class="state empty">
                {insight?.name}: no <code>$feature_flag_called</code> events in the last 30 days.
              </p>
            ) : (
              <UsageChart key={tile.id} title={insight?.name ?? 'Usage'} series={series} />
            );
          })}
          {canEdit && !flag.has_enriched_analytics && (
            <button type="button" disabled={enrich.isPending} onClick={() => enrich.mutate()}>
              Add enriched usage (events with $feature/{flag.key})
            </button>
          )}
        </div>
      )}
      {(create.isError || enrich.isError) && <Failure error={create.error ?? enrich.error} />}
    </section>
  );
}
