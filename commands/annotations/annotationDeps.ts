import { dashboardsReader } from '../../projections/dashboards/dashboardsReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';

/** What the annotation handlers need from the composition root. */
export type AnnotationDeps = Pick<AppContext, 'store' | 'pool' | 'now' | 'awaitProjection'>;
export const annotationDeps = (ctx: AppContext): AnnotationDeps => ctx;

/** PostHog answers "Dashboard not found." for a dashboard of another project or none. */
export async function assertDashboard(deps: AnnotationDeps, projectId: number, id: number | null) {
  if (id !== null && !(await dashboardsReader(deps.pool).get(projectId, id)))
    fail(invalidInput('Dashboard not found.', 'dashboard_id'));
}
