import { dashboardsProjection } from '../../projections/dashboards/dashboardsProjection.ts';
import { type AppContext, awaitNewest, nextId } from '../../src/appContext.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { usageDashboardStream } from './model/dashboard.ts';
import { usageDashboardDecider } from './usageDashboardDecider.ts';

export type UsageDashboardDeps = Pick<AppContext, 'store' | 'pool' | 'now' | 'awaitProjection'>;
type Flag = { projectId: number; flagId: number; flagKey: string };

/**
 * Read-your-writes for the dashboards read model. A command that appends nothing (the dashboard
 * exists, or is enriched, already) may have lost a race with a writer whose event the read model
 * has not applied yet: it then waits for the newest dashboard event instead.
 */
const awaitDashboards = (deps: UsageDashboardDeps, position: bigint | undefined) =>
  position === undefined
    ? awaitNewest(deps, dashboardsProjection.filter, dashboardsProjection)
    : deps.awaitProjection(dashboardsProjection, position);

/** `dashboard/`: the flag's usage dashboard, created the first time; its id. */
export async function createUsageDashboard(
  deps: UsageDashboardDeps,
  input: Flag & { userId: number | null },
  metadata: EventMetadata,
): Promise<number> {
  const handled = await handleCommand(
    deps.store,
    usageDashboardStream(input.projectId, input.flagId),
    usageDashboardDecider,
    {
      type: 'CreateUsageDashboard',
      dashboardId: await nextId(deps.pool, 'dashboard'),
      projectId: input.projectId,
      flagId: input.flagId,
      flagKey: input.flagKey,
      createdAt: deps.now().toISOString(),
      createdByUserId: input.userId,
    },
    metadata,
  );
  await awaitDashboards(deps, handled.position);
  const state = handled.state;
  if (state.status !== 'present') throw new Error('the usage dashboard was not created');
  return state.dashboardId;
}

/** `enrich_usage_dashboard/`: adds the enriched tiles (once). */
export async function enrichUsageDashboard(
  deps: UsageDashboardDeps,
  input: Flag,
  metadata: EventMetadata,
): Promise<void> {
  const handled = await handleCommand(
    deps.store,
    usageDashboardStream(input.projectId, input.flagId),
    usageDashboardDecider,
    { type: 'EnrichUsageDashboard', ...input },
    metadata,
  );
  await awaitDashboards(deps, handled.position);
}
