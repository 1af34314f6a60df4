import { isDeepStrictEqual } from 'node:util';
import { match } from 'ts-pattern';
import type { Decider } from '../../src/core/decider.ts';
import { type DomainError, forbidden, notFound, validation } from '../../src/core/errors.ts';
import { canEditFlag, type FlagEditor } from './model/canEditFlag.ts';
import {
  evolveFlag,
  type FeatureFlagEvent,
  type FeatureFlagState,
  type FlagField,
  type FlagFields,
  flagFieldNames,
  initialFlagState,
} from './model/featureFlag.ts';
import { normalizeFlagFilters, validateFlagFilters, validateFlagKey } from './model/flagFilters.ts';

/**
 * Facts the handler looked up before deciding (the decider stays pure): whether another live flag
 * of the project already uses the key, and who the caller is.
 */
export type CreateFeatureFlag = Readonly<{
  type: 'CreateFeatureFlag';
  flagId: number;
  projectId: number;
  fields: FlagFields;
  deleted: boolean;
  createdAt: string;
  createdByUserId: number | null;
  keyTaken: boolean;
}>;
export type PatchFeatureFlag = Readonly<{
  type: 'PatchFeatureFlag';
  projectId: number;
  changes: Partial<FlagFields> & { deleted?: boolean };
  editor: FlagEditor;
  keyTaken: boolean;
}>;
export type GrantRoleAccess = Readonly<{
  type: 'GrantRoleAccess';
  projectId: number;
  roleAccessId: number;
  roleId: string;
  roleExists: boolean;
  editor: FlagEditor;
  at: string;
}>;
export type RevokeRoleAccess = Readonly<{
  type: 'RevokeRoleAccess';
  projectId: number;
  roleAccessId: number;
  editor: FlagEditor;
}>;
export type FeatureFlagCommand =
  | CreateFeatureFlag
  | PatchFeatureFlag
  | GrantRoleAccess
  | RevokeRoleAccess;

const keyTakenError = () =>
  validation('unique', 'There is already a feature flag with this key.', 'key');

function checkFields(
  fields: Partial<FlagFields>,
  keyTaken: boolean,
): DomainError | Partial<FlagFields> {
  const out: Partial<FlagFields> = { ...fields };
  if (fields.key !== undefined) {
    const key = validateFlagKey(fields.key);
    if (!key.ok) return validation(key.code, key.detail, key.attr);
    if (keyTaken) return keyTakenError();
    // The key is stored as validated: surrounding whitespace trimmed (DRF CharField).
    out.key = key.key;
  }
  if (fields.filters !== undefined) {
    const filters = validateFlagFilters(fields.filters);
    if (!filters.ok) return validation(filters.code, filters.detail, filters.attr);
    out.filters = normalizeFlagFilters(filters.filters) as Record<string, unknown>;
  }
  return out;
}

const mayEdit = (state: Extract<FeatureFlagState, { status: 'present' }>, editor: FlagEditor) =>
  canEditFlag(
    { createdByUserId: state.createdByUserId, roleIds: state.roleAccess.map((r) => r.roleId) },
    editor,
  );

const cannotEdit = () => forbidden("You don't have edit permissions for this feature flag.");

export function decideFeatureFlag(
  command: FeatureFlagCommand,
  state: FeatureFlagState,
): readonly FeatureFlagEvent[] | DomainError {
  return match(command)
    .with({ type: 'CreateFeatureFlag' }, (c): readonly FeatureFlagEvent[] | DomainError => {
      if (state.status === 'present')
        return validation('unique', 'A feature flag with this id already exists.', 'id');
      const checked = checkFields(c.fields, c.keyTaken);
      if ('kind' in checked) return checked;
      const { type: _t, keyTaken: _k, ...data } = c;
      return [
        { type: 'FeatureFlagCreated', data: { ...data, fields: { ...c.fields, ...checked } } },
      ];
    })
    .with({ type: 'PatchFeatureFlag' }, (c): readonly FeatureFlagEvent[] | DomainError => {
      if (state.status === 'absent' || state.projectId !== c.projectId) return notFound();
      if (!mayEdit(state, c.editor)) return cannotEdit();
      const { deleted, ...requested } = c.changes;
      const sent = Object.fromEntries(
        flagFieldNames
          .filter((f: FlagField) => requested[f] !== undefined)
          .map((f) => [f, requested[f]]),
      ) as Partial<FlagFields>;
      // Validate and normalise first (trimmed key, normalised filters), then keep only real changes,
      // so re-sending a stored value in its un-normalised form is not recorded as a change.
      const checked = checkFields(sent, false);
      if ('kind' in checked) return checked;
      const changed = Object.fromEntries(
        flagFieldNames
          .filter(
            (f: FlagField) =>
              checked[f] !== undefined && !isDeepStrictEqual(checked[f], state.fields[f]),
          )
          .map((f) => [f, checked[f]]),
      ) as Partial<FlagFields>;
      const restoring = deleted === false && state.deleted;
      const liveAfter = deleted === undefined ? !state.deleted : !deleted;
      // Keys are unique among live flags only: a restore or a rename of a live flag needs a free key.
      const needsFreeKey = liveAfter && (changed.key !== undefined || restoring);
      if (needsFreeKey && c.keyTaken) return keyTakenError();
      const events: FeatureFlagEvent[] = [];
      if (restoring) events.push({ type: 'FeatureFlagRestored', data: { flagId: state.flagId } });
      if (Object.keys(changed).length > 0)
        events.push({
          type: 'FeatureFlagPatched',
          data: { flagId: state.flagId, changes: changed },
        });
      if (deleted === true && !state.deleted)
        events.push({ type: 'FeatureFlagSoftDeleted', data: { flagId: state.flagId } });
      return events;
    })
    .with({ type: 'GrantRoleAccess' }, (c): readonly FeatureFlagEvent[] | DomainError => {
      if (state.status === 'absent' || state.projectId !== c.projectId) return notFound();
      // Permission first, so a caller who may not edit learns nothing about which role ids exist.
      if (!mayEdit(state, c.editor)) return cannotEdit();
      if (!c.roleExists) return validation('invalid_input', 'Role does not exist.', 'role_id');
      if (state.roleAccess.some((r) => r.roleId === c.roleId))
        return validation(
          'unique',
          'This role already has access to this feature flag.',
          'role_id',
        );
      return [
        {
          type: 'RoleAccessGranted',
          data: {
            flagId: state.flagId,
            roleAccessId: c.roleAccessId,
            roleId: c.roleId,
            addedAt: c.at,
          },
        },
      ];
    })
    .with({ type: 'RevokeRoleAccess' }, (c): readonly FeatureFlagEvent[] | DomainError => {
      if (state.status === 'absent' || state.projectId !== c.projectId) return notFound();
      const entry = state.roleAccess.find((r) => r.roleAccessId === c.roleAccessId);
      if (!entry) return notFound();
      if (!mayEdit(state, c.editor)) return cannotEdit();
      return [
        {
          type: 'RoleAccessRevoked',
          data: { flagId: state.flagId, roleAccessId: entry.roleAccessId, roleId: entry.roleId },
        },
      ];
    })
    .exhaustive();
}

export const featureFlagDecider: Decider<FeatureFlagState, FeatureFlagCommand, FeatureFlagEvent> = {
  initialState: initialFlagState,
  evolve: evolveFlag,
  decide: decideFeatureFlag,
};
