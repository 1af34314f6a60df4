import { dashboardsReader } from '../../projections/dashboards/dashboardsReader.ts';
import { insightsReader } from '../../projections/insights/insightsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';

/** What the annotation handlers need from the composition root. */
export type AnnotationDeps = Pick<AppContext, 'store' | 'pool' | 'now' | 'awaitProjection'>;
export const annotationDeps = (ctx: AppContext): AnnotationDeps => ctx;

/** DRF's answer for a `dashboard_item` that is no insight of the project (a deleted one is). */
export async function assertInsight(deps: AnnotationDeps, projectId: number, id: number | null) {
  if (id !== null && !(await insightsReader(deps.pool).get(projectId, id, true)))
    fail(invalidInput(`Invalid pk "${id}" - object does not exist.`, 'dashboard_item'));
}

/** PostHog answers "Dashboard not found." for a dashboard of another project or none. */
export async function assertDashboard(deps: AnnotationDeps, projectId: number, id: number | null) {
  if (id !== null && !(await dashboardsReader(deps.pool).get(projectId, id)))
    fail(invalidInput('Dashboard not found.', 'dashboard_id'));
}
