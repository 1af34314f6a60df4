/**
 * Who may change a flag. Without role access entries every caller with write scope may; with them,
 * only the flag's creator, project admins and members of a listed role whose flag access level is
 * edit (37). A listed view-level (21) role grants nothing beyond reading.
 */
export type FlagEditor = Readonly<{
  userId: number;
  /** project membership level: 1 member, 8 admin, 15 owner */
  projectLevel: number;
  /** role id → that role's feature_flags_access_level, for every role the user belongs to */
  roles: ReadonlyMap<string, number>;
}>;

export const EDIT_LEVEL = 37;
export const ADMIN_LEVEL = 8;

export function canEditFlag(
  flag: Readonly<{ createdByUserId: number | null; roleIds: readonly string[] }>,
  editor: FlagEditor,
): boolean {
  if (flag.roleIds.length === 0) return true;
  if (flag.createdByUserId === editor.userId) return true;
  if (editor.projectLevel >= ADMIN_LEVEL) return true;
  return flag.roleIds.some((id) => editor.roles.get(id) === EDIT_LEVEL);
}

/**
 * The caller as a `FlagEditor`: the project level the auth step resolved plus the caller's roles,
 * read from the access read model. Commands load it before deciding (the decider stays pure);
 * queries load it for `can_edit`.
 */
export async function loadFlagEditor(
  roles: Readonly<{ roleLevelsOf(userId: number): Promise<ReadonlyMap<string, number>> }>,
  userId: number,
  projectLevel: number,
): Promise<FlagEditor> {
  return { userId, projectLevel, roles: await roles.roleLevelsOf(userId) };
}
