import type { Event } from '../../../src/core/event.ts';
import {
  type FieldsResourceState,
  fieldsResourceEvolve,
  initialFieldsResourceState,
} from '../../shared/model/fieldsResource.ts';
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

export type UserDashboardState = FieldsResourceState<UserDashboardFields>;
export const initialUserDashboardState: () => UserDashboardState = initialFieldsResourceState;
export const evolveUserDashboard: (
  state: UserDashboardState,
  event: UserDashboardEvent,
) => UserDashboardState = fieldsResourceEvolve<'Dashboard', UserDashboardFields>('Dashboard');
