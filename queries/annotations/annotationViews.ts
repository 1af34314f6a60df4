import type pg from 'pg';
import { accessReader } from '../../projections/access/accessReader.ts';
import type { AnnotationRow } from '../../projections/annotations/annotationsReader.ts';
import { dashboardsReader } from '../../projections/dashboards/dashboardsReader.ts';
import { type InsightRow, insightsReader } from '../../projections/insights/insightsReader.ts';
import { type AnnotationView, toAnnotationView } from './annotationView.ts';

/** The views of a page of rows: their creators, dashboards and insights read once each. */
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
  const insightIds = [
    ...new Set(rows.map((r) => r.dashboard_item).filter((id): id is number => id !== null)),
  ];
  const dashboards = dashboardsReader(pool);
  const insights = insightsReader(pool);
  const [creators, names, insightRows] = await Promise.all([
    accessReader(pool).usersById(creatorIds),
    Promise.all(dashboardIds.map(async (id) => [id, (await dashboards.get(projectId, id))?.name])),
    Promise.all(insightIds.map((id) => insights.get(projectId, id, true))),
  ]);
  const nameOf = new Map(names as [number, string | undefined][]);
  const insightOf = new Map(
    insightRows.filter((i): i is InsightRow => i !== undefined).map((i) => [i.id, i]),
  );
  return rows.map((r) =>
    toAnnotationView(
      r,
      r.created_by_user_id === null ? undefined : creators.get(r.created_by_user_id),
      r.dashboard_id === null ? null : (nameOf.get(r.dashboard_id) ?? null),
      r.dashboard_item === null ? undefined : insightOf.get(r.dashboard_item),
    ),
  );
}
