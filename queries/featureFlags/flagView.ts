import { z } from 'zod';
import { canEditFlag, type FlagEditor } from '../../commands/featureFlags/model/canEditFlag.ts';
import {
  deriveFlagFields,
  type FlagFilters,
} from '../../commands/featureFlags/model/flagFilters.ts';
import type { UserRecord } from '../../projections/access/accessReader.ts';
import type { FlagRow } from '../../projections/featureFlags/featureFlagsReader.ts';

export const UserView = z
  .object({
    id: z.number().int(),
    uuid: z.string(),
    distinct_id: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    email: z.string(),
    is_email_verified: z.boolean(),
  })
  .meta({ id: 'User' });
export type UserView = z.infer<typeof UserView>;

export const FlagView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    key: z.string(),
    filters: z.record(z.string(), z.unknown()),
    deleted: z.boolean(),
    active: z.boolean(),
    created_by: UserView.nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    is_simple_flag: z.boolean(),
    rollout_percentage: z.number().nullable(),
    ensure_experience_continuity: z.boolean(),
    experiment_set: z.array(z.number().int()),
    surveys: z.record(z.string(), z.unknown()),
    features: z.record(z.string(), z.unknown()),
    rollback_conditions: z.unknown().nullable(),
    performed_rollback: z.boolean(),
    can_edit: z.boolean(),
    tags: z.array(z.unknown()),
    usage_dashboard: z.number().int().nullable(),
    analytics_dashboards: z.array(z.number().int()),
    has_enriched_analytics: z.boolean(),
  })
  .meta({ id: 'FeatureFlag' });
export type FlagView = z.infer<typeof FlagView>;

export const toUserView = (u: UserRecord): UserView => ({
  id: u.id,
  uuid: u.uuid,
  distinct_id: u.distinct_id,
  first_name: u.first_name,
  last_name: u.last_name,
  email: u.email,
  is_email_verified: true,
});

/** The API's flag, from its read-model row and its creator (read from the users read model). */
export function toFlagView(
  row: FlagRow,
  creator: UserRecord | undefined,
  editor: FlagEditor,
  usageDashboard?: { id: number; enriched: boolean },
): FlagView {
  const derived = deriveFlagFields(row.filters as FlagFilters);
  return {
    id: row.id,
    name: row.name,
    key: row.key,
    filters: row.filters,
    deleted: row.deleted,
    active: row.active,
    created_by: creator ? toUserView(creator) : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    is_simple_flag: derived.is_simple_flag,
    rollout_percentage: derived.rollout_percentage,
    ensure_experience_continuity: row.ensure_experience_continuity,
    experiment_set: [],
    surveys: {},
    features: {},
    rollback_conditions: row.rollback_conditions ?? null,
    performed_rollback: row.performed_rollback,
    can_edit: canEditFlag(
      { createdByUserId: row.created_by_user_id, roleIds: row.role_ids },
      editor,
    ),
    tags: row.tags,
    usage_dashboard: usageDashboard?.id ?? null,
    analytics_dashboards: row.analytics_dashboards,
    has_enriched_analytics: row.has_enriched_analytics || usageDashboard?.enriched === true,
  };
}
