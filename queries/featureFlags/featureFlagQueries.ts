import type pg from 'pg';
import type { FlagEditor } from '../../commands/featureFlags/model/canEditFlag.ts';
import { type AccessReader, accessReader } from '../../projections/access/accessReader.ts';
import {
  type DashboardsReader,
  dashboardsReader,
} from '../../projections/dashboards/dashboardsReader.ts';
import {
  type FeatureFlagsReader,
  type FlagRow,
  featureFlagsReader,
} from '../../projections/featureFlags/featureFlagsReader.ts';
import { type FlagView, toFlagView } from './flagView.ts';

/** What flag views are read from: the flags read model, and the access one for users and roles. */
export type FlagReaders = Readonly<{
  flags: FeatureFlagsReader;
  access: Pick<AccessReader, 'usersById' | 'roleWithMembers' | 'roleLevelsOf' | 'activityUsers'>;
  /** the flags' usage dashboards (`usage_dashboard`, `has_enriched_analytics`) */
  dashboards: Pick<DashboardsReader, 'usageDashboardsOf'>;
}>;

export const flagReaders = (pool: pg.Pool): FlagReaders => ({
  flags: featureFlagsReader(pool),
  access: accessReader(pool),
  dashboards: dashboardsReader(pool),
});

/** Views of flag rows, with their creators read in one go. */
export async function toFlagViews(
  readers: FlagReaders,
  rows: readonly FlagRow[],
  editor: FlagEditor,
): Promise<FlagView[]> {
  const creatorIds = [
    ...new Set(rows.map((r) => r.created_by_user_id).filter((id): id is number => id !== null)),
  ];
  const [creators, dashboards] = await Promise.all([
    creatorIds.length > 0 ? readers.access.usersById(creatorIds) : new Map(),
    rows.length > 0
      ? readers.dashboards.usageDashboardsOf(
          rows[0]!.project_id,
          rows.map((r) => r.id),
        )
      : new Map<number, { id: number; enriched: boolean }>(),
  ]);
  return rows.map((r) =>
    toFlagView(
      r,
      r.created_by_user_id === null ? undefined : creators.get(r.created_by_user_id),
      editor,
      dashboards.get(r.id),
    ),
  );
}

/** Soft-deleted flags are hidden from the list, as in PostHog; a GET by id still finds them. */
export async function listFeatureFlags(
  readers: FlagReaders,
  projectId: number,
  page: { limit: number; offset: number },
  editor: FlagEditor,
): Promise<{ count: number; results: FlagView[] }> {
  const { count, rows } = await readers.flags.list(projectId, page);
  return { count, results: await toFlagViews(readers, rows, editor) };
}

export async function getFeatureFlag(
  readers: FlagReaders,
  projectId: number,
  flagId: number,
  editor: FlagEditor,
): Promise<FlagView | undefined> {
  const row = await readers.flags.get(projectId, flagId);
  return row ? (await toFlagViews(readers, [row], editor))[0] : undefined;
}
