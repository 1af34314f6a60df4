import { match } from 'ts-pattern';
import type { Event } from '../../../src/core/event.ts';
import { type DashboardEvent, dashboardEventTypes } from './dashboard.ts';

/**
 * A dashboard a user made (issue #28), beside the flags' usage dashboards: its insights are saved
 * insights, put on it by the insight (`dashboards: [ids]`, commands/insights).
 */
export type UserDashboardFields = {
  name: string;
  description: string;
  pinned: boolean;
  /** dashboard-level filters, kept as sent (PostHog applies them to the tiles; not applied here) */
  filters: Record<string, unknown>;
};

export type DashboardCreated = Event<
  'DashboardCreated',
  {
    dashboardId: number;
    projectId: number;
    fields: UserDashboardFields;
    createdAt: string;
    createdByUserId: number | null;
  }
>;
/** carries only the fields whose value changed */
export type DashboardUpdated = Event<
  'DashboardUpdated',
  { dashboardId: number; changes: Partial<UserDashboardFields> }
>;
export type DashboardSoftDeleted = Event<'DashboardSoftDeleted', { dashboardId: number }>;
export type UserDashboardEvent = DashboardCreated | DashboardUpdated | DashboardSoftDeleted;
/** Every event the dashboards read model folds: usage dashboards' and users' own. */
export type AnyDashboardEvent = DashboardEvent | UserDashboardEvent;
export const userDashboardEventTypes = [
  'DashboardCreated',
  'DashboardUpdated',
  'DashboardSoftDeleted',
] as const satisfies readonly UserDashboardEvent['type'][];
export const anyDashboardEventTypes: readonly AnyDashboardEvent['type'][] = [
  ...dashboardEventTypes,
  ...userDashboardEventTypes,
];
export const userDashboardStream = (dashboardId: number) => `dashboard-${dashboardId}`;

export type UserDashboardState =
  | { status: 'absent' }
  | { status: 'present'; projectId: number; fields: UserDashboardFields; deleted: boolean };

export const initialUserDashboardState = (): UserDashboardState => ({ status: 'absent' });

export function evolveUserDashboard(
  state: UserDashboardState,
  event: UserDashboardEvent,
): UserDashboardState {
  if (state.status === 'absent')
    return event.type === 'DashboardCreated'
      ? {
          status: 'present',
          projectId: event.data.projectId,
          fields: event.data.fields,
          deleted: false,
        }
      : state;
  return match(event)
    .with({ type: 'DashboardCreated' }, () => state)
    .with({ type: 'DashboardUpdated' }, (e) => ({
      ...state,
      fields: { ...state.fields, ...e.data.changes },
    }))
    .with({ type: 'DashboardSoftDeleted' }, () => ({ ...state, deleted: true }))
    .exhaustive();
}
