import { z } from 'zod';
import type { FlagEditor } from '../../commands/featureFlags/model/canEditFlag.ts';
import type { RoleAccessRow } from '../../projections/featureFlags/featureFlagsReader.ts';
import { type FlagReaders, getFeatureFlag } from './featureFlagQueries.ts';
import { FlagView, toUserView, UserView } from './flagView.ts';

/**
 * `members` and `associated_flags` are strings in the contract (api-spec.md); they carry the lists
 * as JSON text so a client can still read them (see docs/DECISIONS.md).
 */
export const RoleView = z
  .object({
    id: z.string(),
    name: z.string(),
    feature_flags_access_level: z.number().int(),
    created_at: z.string(),
    created_by: UserView.nullable(),
    members: z.string(),
    associated_flags: z.string(),
  })
  .meta({ id: 'Role' });

export const RoleAccessView = z
  .object({
    id: z.number().int(),
    feature_flag: FlagView,
    role: RoleView,
    role_id: z.string(),
    added_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'FeatureFlagRoleAccess' });
export type RoleAccessView = z.infer<typeof RoleAccessView>;

/** A role as the API shows it: the access read model's role, and the flags of the project listing it. */
async function roleView(
  readers: FlagReaders,
  projectId: number,
  roleId: string,
): Promise<z.infer<typeof RoleView>> {
  const [role, flags] = await Promise.all([
    readers.access.roleWithMembers(roleId),
    readers.flags.flagsWithRole(roleId, projectId),
  ]);
  if (!role)
    throw new Error(`role ${roleId} of a role access entry is missing from the access read model`);
  return {
    id: role.id,
    name: role.name,
    feature_flags_access_level: role.feature_flags_access_level,
    created_at: role.created_at.toISOString(),
    created_by: role.creator ? toUserView(role.creator) : null,
    members: JSON.stringify(role.members),
    associated_flags: JSON.stringify(flags),
  };
}

async function toView(
  readers: FlagReaders,
  projectId: number,
  row: RoleAccessRow,
  editor: FlagEditor,
): Promise<RoleAccessView> {
  const [flag, role] = await Promise.all([
    getFeatureFlag(readers, projectId, row.flag_id, editor),
    roleView(readers, projectId, row.role_id),
  ]);
  return {
    id: row.id,
    feature_flag: flag!,
    role,
    role_id: row.role_id,
    added_at: row.added_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export async function listRoleAccess(
  readers: FlagReaders,
  projectId: number,
  flagId: number,
  page: { limit: number; offset: number },
  editor: FlagEditor,
): Promise<{ count: number; results: RoleAccessView[] }> {
  const { count, rows } = await readers.flags.listRoleAccess(flagId, page);
  return {
    count,
    results: await Promise.all(rows.map((r) => toView(readers, projectId, r, editor))),
  };
}

export async function getRoleAccess(
  readers: FlagReaders,
  projectId: number,
  flagId: number,
  id: number,
  editor: FlagEditor,
): Promise<RoleAccessView | undefined> {
  const row = await readers.flags.getRoleAccess(flagId, id);
  return row ? toView(readers, projectId, row, editor) : undefined;
}
