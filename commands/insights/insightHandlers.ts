import { randomInt } from 'node:crypto';
import { dashboardsProjection } from '../../projections/dashboards/dashboardsProjection.ts';
import { dashboardsReader } from '../../projections/dashboards/dashboardsReader.ts';
import { insightsProjection } from '../../projections/insights/insightsProjection.ts';
import { type AppContext, awaitNewest, nextId } from '../../src/appContext.ts';
import { handleCommand } from '../../src/commandHandling/handleCommand.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { type DashboardsWanted, insightDecider, type PatchInsight } from './insightDecider.ts';
import { type InsightFields, insightStream } from './model/insight.ts';

export type InsightDeps = Pick<AppContext, 'store' | 'pool' | 'now' | 'awaitProjection'>;

const SHORT_ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** PostHog's short id: 8 random letters and digits (the insight's URL, `/insights/<short_id>`). */
const shortId = () =>
  Array.from({ length: 8 }, () => SHORT_ID_ALPHABET[randomInt(SHORT_ID_ALPHABET.length)]).join('');

/** The dashboards asked for, checked to be the project's live ones, with tile ids drawn ahead. */
async function dashboardsWanted(
  deps: InsightDeps,
  projectId: number,
  ids: readonly number[],
): Promise<DashboardsWanted> {
  const unique = [...new Set(ids)];
  if (unique.length > 0) {
    await awaitNewest(deps, dashboardsProjection.filter, dashboardsProjection);
    const live = await dashboardsReader(deps.pool).liveOf(projectId, unique);
    const missing = unique.filter((id) => !live.has(id));
    if (missing.length > 0)
      fail(invalidInput(`Dashboard not found: ${missing.join(', ')}.`, 'dashboards'));
  }
  const freshTileIds: number[] = [];
  for (const _ of unique) freshTileIds.push(await nextId(deps.pool, 'dashboard_tile'));
  return { ids: unique, freshTileIds };
}

/** Saves an insight and returns once the insights read model shows it. */
export async function createInsight(
  deps: InsightDeps,
  input: { projectId: number; userId: number | null; fields: InsightFields; dashboards: number[] },
  metadata: EventMetadata,
): Promise<{ insightId: number }> {
  const dashboards = await dashboardsWanted(deps, input.projectId, input.dashboards);
  const insightId = await nextId(deps.pool, 'insight');
  const handled = await handleCommand(
    deps.store,
    insightStream(insightId),
    insightDecider,
    {
      type: 'CreateInsight',
      insightId,
      projectId: input.projectId,
      shortId: shortId(),
      fields: input.fields,
      dashboards,
      createdAt: deps.now().toISOString(),
      createdByUserId: input.userId,
    },
    metadata,
  );
  await deps.awaitProjection(insightsProjection, handled.position);
  return { insightId };
}

/** Changes, moves between dashboards, soft-deletes or restores an insight (404 for another project's). */
export async function patchInsight(
  deps: InsightDeps,
  input: {
    insightId: number;
    projectId: number;
    changes: PatchInsight['changes'];
    dashboards?: number[] | undefined;
  },
  metadata: EventMetadata,
): Promise<void> {
  const dashboards =
    input.dashboards === undefined
      ? undefined
      : await dashboardsWanted(deps, input.projectId, input.dashboards);
  const handled = await handleCommand(
    deps.store,
    insightStream(input.insightId),
    insightDecider,
    {
      type: 'PatchInsight',
      insightId: input.insightId,
      projectId: input.projectId,
      changes: input.changes,
      ...(dashboards ? { dashboards } : {}),
      at: deps.now().toISOString(),
    },
    metadata,
  );
  await deps.awaitProjection(insightsProjection, handled.position);
}
