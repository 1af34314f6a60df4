import { match } from 'ts-pattern';
import type { Event } from '../../../src/core/event.ts';

/** The writable fields of a flag, named as the API names them. */
export type FlagFields = {
  name: string;
  key: string;
  filters: Record<string, unknown>;
  active: boolean;
  ensure_experience_continuity: boolean;
  rollback_conditions: unknown;
  performed_rollback: boolean;
  tags: unknown[];
  analytics_dashboards: number[];
  has_enriched_analytics: boolean;
};
export type FlagField = keyof FlagFields;
export const flagFieldNames: readonly FlagField[] = [
  'name',
  'key',
  'filters',
  'active',
  'ensure_experience_continuity',
  'rollback_conditions',
  'performed_rollback',
  'tags',
  'analytics_dashboards',
  'has_enriched_analytics',
];

export type FeatureFlagCreated = Event<
  'FeatureFlagCreated',
  {
    flagId: number;
    projectId: number;
    fields: FlagFields;
    deleted: boolean;
    createdAt: string;
    createdByUserId: number | null;
  }
>;
/** carries only the fields whose value changed, with their new values */
export type FeatureFlagPatched = Event<
  'FeatureFlagPatched',
  { flagId: number; changes: Partial<FlagFields> }
>;
export type FeatureFlagSoftDeleted = Event<'FeatureFlagSoftDeleted', { flagId: number }>;
export type FeatureFlagRestored = Event<'FeatureFlagRestored', { flagId: number }>;
export type RoleAccessGranted = Event<
  'RoleAccessGranted',
  { flagId: number; roleAccessId: number; roleId: string; addedAt: string }
>;
export type RoleAccessRevoked = Event<
  'RoleAccessRevoked',
  { flagId: number; roleAccessId: number; roleId: string }
>;

export type FeatureFlagEvent =
  | FeatureFlagCreated
  | FeatureFlagPatched
  | FeatureFlagSoftDeleted
  | FeatureFlagRestored
  | RoleAccessGranted
  | RoleAccessRevoked;

export const featureFlagEventTypes: readonly FeatureFlagEvent['type'][] = [
  'FeatureFlagCreated',
  'FeatureFlagPatched',
  'FeatureFlagSoftDeleted',
  'FeatureFlagRestored',
  'RoleAccessGranted',
  'RoleAccessRevoked',
];

export const FEATURE_FLAG_CATEGORY = 'feature_flag';
export const featureFlagStream = (flagId: number) => `${FEATURE_FLAG_CATEGORY}-${flagId}`;

export type RoleAccessEntry = Readonly<{ roleAccessId: number; roleId: string; addedAt: string }>;

export type FeatureFlagState =
  | { status: 'absent' }
  | {
      status: 'present';
      flagId: number;
      projectId: number;
      fields: FlagFields;
      deleted: boolean;
      createdAt: string;
      createdByUserId: number | null;
      roleAccess: readonly RoleAccessEntry[];
    };

export const initialFlagState = (): FeatureFlagState => ({ status: 'absent' });

export function evolveFlag(state: FeatureFlagState, event: FeatureFlagEvent): FeatureFlagState {
  if (state.status === 'absent') {
    if (event.type !== 'FeatureFlagCreated') return state;
    const d = event.data;
    return {
      status: 'present',
      flagId: d.flagId,
      projectId: d.projectId,
      fields: d.fields,
      deleted: d.deleted,
      createdAt: d.createdAt,
      createdByUserId: d.createdByUserId,
      roleAccess: [],
    };
  }
  return match(event)
    .with({ type: 'FeatureFlagCreated' }, () => state)
    .with({ type: 'FeatureFlagPatched' }, (e) => ({
      ...state,
      fields: { ...state.fields, ...e.data.changes },
    }))
    .with({ type: 'FeatureFlagSoftDeleted' }, () => ({ ...state, deleted: true }))
    .with({ type: 'FeatureFlagRestored' }, () => ({ ...state, deleted: false }))
    .with({ type: 'RoleAccessGranted' }, (e) => ({
      ...state,
      roleAccess: [
        ...state.roleAccess,
        { roleAccessId: e.data.roleAccessId, roleId: e.data.roleId, addedAt: e.data.addedAt },
      ],
    }))
    .with({ type: 'RoleAccessRevoked' }, (e) => ({
      ...state,
      roleAccess: state.roleAccess.filter((r) => r.roleAccessId !== e.data.roleAccessId),
    }))
    .exhaustive();
}
