import { isDeepStrictEqual } from 'node:util';
import { match } from 'ts-pattern';
import type { Decider } from '../../src/core/decider.ts';
import { type DomainError, notFound } from '../../src/core/errors.ts';
import {
  evolveUserDashboard,
  initialUserDashboardState,
  type UserDashboardEvent,
  type UserDashboardFields,
  type UserDashboardState,
} from './model/userDashboard.ts';

export type CreateDashboard = Readonly<{
  type: 'CreateDashboard';
  dashboardId: number;
  projectId: number;
  fields: UserDashboardFields;
  createdAt: string;
  createdByUserId: number | null;
}>;
export type PatchDashboard = Readonly<{
  type: 'PatchDashboard';
  dashboardId: number;
  projectId: number;
  changes: Partial<UserDashboardFields> & { deleted?: boolean };
}>;
export type UserDashboardCommand = CreateDashboard | PatchDashboard;

const FIELDS = ['name', 'description', 'pinned', 'filters'] as const;

/** Create once; a patch records only what changes; `deleted: true` soft-deletes (for good). */
function decide(
  command: UserDashboardCommand,
  state: UserDashboardState,
): UserDashboardEvent[] | DomainError {
  return match(command)
    .with({ type: 'CreateDashboard' }, (c): UserDashboardEvent[] =>
      state.status === 'present'
        ? []
        : [
            {
              type: 'DashboardCreated',
              data: {
                dashboardId: c.dashboardId,
                projectId: c.projectId,
                fields: c.fields,
                createdAt: c.createdAt,
                createdByUserId: c.createdByUserId,
              },
            },
          ],
    )
    .with({ type: 'PatchDashboard' }, (c): UserDashboardEvent[] | DomainError => {
      if (state.status === 'absent' || state.projectId !== c.projectId || state.deleted)
        return notFound();
      const changes: Partial<UserDashboardFields> = {};
      for (const name of FIELDS) {
        const value = c.changes[name];
        if (value !== undefined && !isDeepStrictEqual(value, state.fields[name]))
          Object.assign(changes, { [name]: value });
      }
      const events: UserDashboardEvent[] = [];
      if (Object.keys(changes).length > 0)
        events.push({ type: 'DashboardUpdated', data: { dashboardId: c.dashboardId, changes } });
      if (c.changes.deleted === true)
        events.push({ type: 'DashboardSoftDeleted', data: { dashboardId: c.dashboardId } });
      return events;
    })
    .exhaustive();
}

export const userDashboardDecider: Decider<
  UserDashboardState,
  UserDashboardCommand,
  UserDashboardEvent
> = { initialState: initialUserDashboardState, evolve: evolveUserDashboard, decide };
