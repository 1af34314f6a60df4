import { isDeepStrictEqual } from 'node:util';
import { match } from 'ts-pattern';
import type { Decider } from '../../src/core/decider.ts';
import { type DomainError, notFound } from '../../src/core/errors.ts';
import {
  evolveInsight,
  type InsightEvent,
  type InsightFields,
  type InsightState,
  type InsightTile,
  initialInsightState,
} from './model/insight.ts';

/** The dashboards an insight should be on, and tile ids drawn ahead for the ones it is not on yet. */
export type DashboardsWanted = Readonly<{
  ids: readonly number[];
  freshTileIds: readonly number[];
}>;

export type CreateInsight = Readonly<{
  type: 'CreateInsight';
  insightId: number;
  projectId: number;
  shortId: string;
  fields: InsightFields;
  dashboards: DashboardsWanted;
  createdAt: string;
  createdByUserId: number | null;
}>;
export type PatchInsight = Readonly<{
  type: 'PatchInsight';
  insightId: number;
  projectId: number;
  changes: Partial<InsightFields> & { deleted?: boolean };
  dashboards?: DashboardsWanted;
  at: string;
}>;
export type InsightCommand = CreateInsight | PatchInsight;

const FIELDS = ['name', 'description', 'filters', 'query', 'saved', 'favorited'] as const;

/** Tiles for the wanted dashboards: a dashboard it is already on keeps its tile (and id). */
function tilesFor(current: readonly InsightTile[], wanted: DashboardsWanted): InsightTile[] {
  const tiles: InsightTile[] = [];
  let fresh = 0;
  for (const dashboardId of new Set(wanted.ids)) {
    const kept = current.find((t) => t.dashboardId === dashboardId);
    const tileId = kept?.tileId ?? wanted.freshTileIds[fresh++];
    if (tileId !== undefined) tiles.push({ dashboardId, tileId });
  }
  return tiles;
}

const sameDashboards = (a: readonly InsightTile[], b: readonly InsightTile[]) =>
  a.length === b.length && a.every((t) => b.some((u) => u.dashboardId === t.dashboardId));

/**
 * Create once; a patch records only what changes (the fields, then the dashboards), and
 * `deleted` soft-deletes or restores.
 */
function decide(command: InsightCommand, state: InsightState): InsightEvent[] | DomainError {
  return match(command)
    .with({ type: 'CreateInsight' }, (c): InsightEvent[] =>
      state.status === 'present'
        ? []
        : [
            {
              type: 'InsightCreated',
              data: {
                insightId: c.insightId,
                projectId: c.projectId,
                shortId: c.shortId,
                fields: c.fields,
                tiles: tilesFor([], c.dashboards),
                createdAt: c.createdAt,
                createdByUserId: c.createdByUserId,
              },
            },
          ],
    )
    .with({ type: 'PatchInsight' }, (c): InsightEvent[] | DomainError => {
      if (state.status === 'absent' || state.projectId !== c.projectId) return notFound();
      if (state.deleted && c.changes.deleted !== false) return notFound();
      const events: InsightEvent[] = [];
      if (state.deleted) events.push({ type: 'InsightRestored', data: { insightId: c.insightId } });
      const changes: Partial<InsightFields> = {};
      for (const name of FIELDS) {
        const value = c.changes[name];
        if (value !== undefined && !isDeepStrictEqual(value, state.fields[name]))
          Object.assign(changes, { [name]: value });
      }
      if (Object.keys(changes).length > 0)
        events.push({
          type: 'InsightUpdated',
          data: { insightId: c.insightId, changes, at: c.at },
        });
      if (c.dashboards && c.changes.deleted !== true) {
        const tiles = tilesFor(state.tiles, c.dashboards);
        if (!sameDashboards(tiles, state.tiles))
          events.push({ type: 'InsightDashboardsSet', data: { insightId: c.insightId, tiles } });
      }
      if (c.changes.deleted === true)
        events.push({ type: 'InsightSoftDeleted', data: { insightId: c.insightId } });
      return events;
    })
    .exhaustive();
}

export const insightDecider: Decider<InsightState, InsightCommand, InsightEvent> = {
  initialState: initialInsightState,
  evolve: evolveInsight,
  decide,
};
