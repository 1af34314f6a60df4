import type pg from 'pg';
import { accessReader } from '../../projections/access/accessReader.ts';
import type { AnnotationRow } from '../../projections/annotations/annotationsReader.ts';
import { dashboardsReader } from '../../projections/dashboards/dashboardsReader.ts';
import { type AnnotationView, toAnnotationView } from './annotationView.ts';

/** The views of a page of rows: their creators and dashboards read once each. */
export async function annotationViews(
  pool: pg.Pool,
  projectId: number,
  rows: readonly AnnotationRow[],
): Promise<AnnotationView[]> {
  const creatorIds = [
    ...new Set(rows.map((r) => r.created_by_user_id).filter((id): id is number => id !== null)),
  ];
  const dashboardIds = [
    ...new Set(rows.map((r) => r.dashboard_id).filter((id): id is number => id !== null)),
  ];
  const dashboards = dashboardsReader(pool);
  const [creators, names] = await Promise.all([
    accessReader(pool).usersById(creatorIds),
    Promise.all(dashboardIds.map(async (id) => [id, (await dashboards.get(projectId, id))?.name])),
  ]);
  const nameOf = new Map(names as [number, string | undefined][]);
  return rows.map((r) =>
    toAnnotationView(
      r,
      r.created_by_user_id === null ? undefined : creators.get(r.created_by_user_id),
      r.dashboard_id === null ? null : (nameOf.get(r.dashboard_id) ?? null),
    ),
  );
}
