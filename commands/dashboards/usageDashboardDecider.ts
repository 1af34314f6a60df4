import { match } from 'ts-pattern';
import type { Decider } from '../../src/core/decider.ts';
import { type DomainError, invalidInput } from '../../src/core/errors.ts';
import {
  type DashboardEvent,
  enrichedTiles,
  evolveUsageDashboard,
  initialUsageDashboardState,
  type UsageDashboardState,
  usageTiles,
} from './model/dashboard.ts';

export type CreateUsageDashboard = Readonly<{
  type: 'CreateUsageDashboard';
  dashboardId: number;
  projectId: number;
  flagId: number;
  flagKey: string;
  createdAt: string;
  createdByUserId: number | null;
}>;
export type EnrichUsageDashboard = Readonly<{
  type: 'EnrichUsageDashboard';
  projectId: number;
  flagId: number;
  flagKey: string;
}>;
export type UsageDashboardCommand = CreateUsageDashboard | EnrichUsageDashboard;

/** One usage dashboard per flag (created once); enriched once, and only once it exists. */
function decide(
  command: UsageDashboardCommand,
  state: UsageDashboardState,
): DashboardEvent[] | DomainError {
  return match(command)
    .with({ type: 'CreateUsageDashboard' }, (c): DashboardEvent[] =>
      state.status === 'present'
        ? []
        : [
            {
              type: 'UsageDashboardCreated',
              data: {
                dashboardId: c.dashboardId,
                projectId: c.projectId,
                flagId: c.flagId,
                name: `Generated Dashboard: ${c.flagKey} Usage`,
                description: `Usage of the feature flag ${c.flagKey}`,
                tiles: usageTiles(c.dashboardId, c.flagKey),
                createdAt: c.createdAt,
                createdByUserId: c.createdByUserId,
              },
            },
          ],
    )
    .with({ type: 'EnrichUsageDashboard' }, (c): DashboardEvent[] | DomainError => {
      if (state.status === 'absent')
        return invalidInput(
          'The flag has no usage dashboard yet: create it with dashboard/ first.',
        );
      if (state.enriched) return [];
      return [
        {
          type: 'UsageDashboardEnriched',
          data: {
            dashboardId: state.dashboardId,
            projectId: c.projectId,
            flagId: c.flagId,
            tiles: enrichedTiles(state.dashboardId, c.flagKey),
          },
        },
      ];
    })
    .exhaustive();
}

export const usageDashboardDecider: Decider<
  UsageDashboardState,
  UsageDashboardCommand,
  DashboardEvent
> = { initialState: initialUsageDashboardState, evolve: evolveUsageDashboard, decide };
