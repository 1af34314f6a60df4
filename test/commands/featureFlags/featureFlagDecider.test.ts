import { describe, expect, it } from 'vitest';
import {
  type CreateFeatureFlag,
  featureFlagDecider,
  type GrantRoleAccess,
  type PatchFeatureFlag,
  type RevokeRoleAccess,
} from '../../../commands/featureFlags/featureFlagDecider.ts';
import type { FlagEditor } from '../../../commands/featureFlags/model/canEditFlag.ts';
import type {
  FeatureFlagCreated,
  FeatureFlagEvent,
  FeatureFlagState,
  FlagFields,
  RoleAccessGranted,
} from '../../../commands/featureFlags/model/featureFlag.ts';
import { DeciderSpecification } from '../../support/deciderSpec.ts';

const given = DeciderSpecification.for(featureFlagDecider);

const FLAG_ID = 7;
const PROJECT_ID = 1;
const OTHER_PROJECT_ID = 2;
const CREATOR_ID = 100;
const CREATED_AT = '2024-05-01T10:00:00.000Z';
const GRANTED_AT = '2024-05-02T10:00:00.000Z';
const EDIT_ROLE = '0190a0b0-0000-7000-8000-000000000037';
const VIEW_ROLE = '0190a0b0-0000-7000-8000-000000000021';
const UNLISTED_ROLE = '0190a0b0-0000-7000-8000-000000000999';

/** filters exactly as normalizeFlagFilters stores them */
const storedFilters = {
  groups: [{ properties: [], rollout_percentage: 100, aggregation_group_type_index: null }],
  aggregation_group_type_index: null,
};

const fields = (overrides: Partial<FlagFields> = {}): FlagFields => ({
  name: 'Beta feature',
  key: 'beta-feature',
  filters: storedFilters,
  active: true,
  ensure_experience_continuity: false,
  rollback_conditions: null,
  performed_rollback: false,
  tags: [],
  analytics_dashboards: [],
  has_enriched_analytics: false,
  ...overrides,
});

// ---- events ----
const created = (overrides: Partial<FeatureFlagCreated['data']> = {}): FeatureFlagCreated => ({
  type: 'FeatureFlagCreated',
  data: {
    flagId: FLAG_ID,
    projectId: PROJECT_ID,
    fields: fields(),
    deleted: false,
    createdAt: CREATED_AT,
    createdByUserId: CREATOR_ID,
    ...overrides,
  },
});
const patched = (changes: Partial<FlagFields>): FeatureFlagEvent => ({
  type: 'FeatureFlagPatched',
  data: { flagId: FLAG_ID, changes },
});
const softDeleted: FeatureFlagEvent = { type: 'FeatureFlagSoftDeleted', data: { flagId: FLAG_ID } };
const restored: FeatureFlagEvent = { type: 'FeatureFlagRestored', data: { flagId: FLAG_ID } };
const granted = (roleAccessId: number, roleId: string): RoleAccessGranted => ({
  type: 'RoleAccessGranted',
  data: { flagId: FLAG_ID, roleAccessId, roleId, addedAt: GRANTED_AT },
});
const revoked = (roleAccessId: number, roleId: string): FeatureFlagEvent => ({
  type: 'RoleAccessRevoked',
  data: { flagId: FLAG_ID, roleAccessId, roleId },
});

// ---- editors ----
const editor = (userId: number, projectLevel = 1, roles: [string, number][] = []): FlagEditor => ({
  userId,
  projectLevel,
  roles: new Map(roles),
});
const creator = editor(CREATOR_ID);
const stranger = editor(200);
const admin = editor(300, 8);
const owner = editor(301, 15);
const editRoleMember = editor(400, 1, [[EDIT_ROLE, 37]]);
const viewRoleMember = editor(401, 1, [[VIEW_ROLE, 21]]);
const unlistedEditRoleMember = editor(402, 1, [[UNLISTED_ROLE, 37]]);
/** member of a listed role whose level is view, and of an unlisted one whose level is edit */
const mixedMember = editor(403, 1, [
  [VIEW_ROLE, 21],
  [UNLISTED_ROLE, 37],
]);

// ---- commands ----
const create = (overrides: Partial<CreateFeatureFlag> = {}): CreateFeatureFlag => ({
  type: 'CreateFeatureFlag',
  flagId: FLAG_ID,
  projectId: PROJECT_ID,
  fields: fields(),
  deleted: false,
  createdAt: CREATED_AT,
  createdByUserId: CREATOR_ID,
  keyTaken: false,
  ...overrides,
});
const patch = (
  changes: PatchFeatureFlag['changes'],
  overrides: Partial<PatchFeatureFlag> = {},
): PatchFeatureFlag => ({
  type: 'PatchFeatureFlag',
  projectId: PROJECT_ID,
  changes,
  editor: creator,
  keyTaken: false,
  ...overrides,
});
const grant = (
  roleAccessId: number,
  roleId: string,
  overrides: Partial<GrantRoleAccess> = {},
): GrantRoleAccess => ({
  type: 'GrantRoleAccess',
  projectId: PROJECT_ID,
  roleAccessId,
  roleId,
  roleExists: true,
  editor: creator,
  at: GRANTED_AT,
  ...overrides,
});
const revoke = (
  roleAccessId: number,
  overrides: Partial<RevokeRoleAccess> = {},
): RevokeRoleAccess => ({
  type: 'RevokeRoleAccess',
  projectId: PROJECT_ID,
  roleAccessId,
  editor: creator,
  ...overrides,
});

const forbidden = {
  kind: 'forbidden',
  code: 'permission_denied',
  detail: "You don't have edit permissions for this feature flag.",
} as const;
const notFound = { kind: 'not_found', code: 'not_found', attr: null } as const;
const keyTaken = {
  kind: 'validation',
  code: 'unique',
  attr: 'key',
  detail: 'There is already a feature flag with this key.',
} as const;

describe('featureFlagDecider: CreateFeatureFlag', () => {
  it('creates a flag, storing filters in normalized form', () => {
    const rawFilters = {
      groups: [
        {
          properties: [{ key: 'email', value: 'x', operator: 'exact', type: 'person' }],
          rollout_percentage: 50,
        },
      ],
      multivariate: {
        variants: [
          { key: 'a', rollout_percentage: 60 },
          { key: 'b', rollout_percentage: 40 },
        ],
      },
      payloads: { a: { colour: 'blue' }, b: '"plain"' },
    };
    given([])
      .when(create({ fields: fields({ filters: rawFilters }) }))
      .then([
        created({
          fields: fields({
            filters: {
              groups: [
                {
                  properties: [{ key: 'email', value: 'x', operator: 'exact', type: 'person' }],
                  rollout_percentage: 50,
                  aggregation_group_type_index: null,
                },
              ],
              multivariate: {
                variants: [
                  { key: 'a', rollout_percentage: 60 },
                  { key: 'b', rollout_percentage: 40 },
                ],
              },
              payloads: { a: '{"colour": "blue"}', b: '"plain"' },
              aggregation_group_type_index: null,
            },
          }),
        }),
      ]);
  });

  it('keeps every other field, the creator and the deleted flag as given', () => {
    const custom = fields({
      name: 'Checkout v2',
      key: 'checkout_v2',
      active: false,
      ensure_experience_continuity: true,
      rollback_conditions: [{ threshold: 5 }],
      performed_rollback: true,
      tags: ['growth'],
      analytics_dashboards: [3, 4],
      has_enriched_analytics: true,
    });
    given([])
      .when(create({ fields: custom, deleted: true, createdByUserId: null }))
      .then([created({ fields: custom, deleted: true, createdByUserId: null })]);
  });

  it.each([
    [
      'spaces and punctuation',
      'bad key!',
      'invalid_key',
      'Only letters, numbers, hyphens (-) & underscores (_) are allowed.',
    ],
    ['blank', '   ', 'blank', 'This field may not be blank.'],
    [
      'too long',
      'k'.repeat(401),
      'max_length',
      'Ensure this field has no more than 400 characters.',
    ],
  ])('rejects an invalid key (%s)', (_, key, code, detail) => {
    given([])
      .when(create({ fields: fields({ key }) }))
      .thenFails({ kind: 'validation', code, detail, attr: 'key' });
  });

  it('rejects a key another live flag of the project uses', () => {
    given([])
      .when(create({ keyTaken: true }))
      .thenFails(keyTaken);
  });

  it('reports an invalid key before a taken one', () => {
    given([])
      .when(create({ fields: fields({ key: 'no spaces' }), keyTaken: true }))
      .thenFails({ code: 'invalid_key', attr: 'key' });
  });

  it('rejects variants whose rollout does not sum to 100', () => {
    const filters = {
      groups: [],
      multivariate: {
        variants: [
          { key: 'a', rollout_percentage: 50 },
          { key: 'b', rollout_percentage: 40 },
        ],
      },
    };
    given([])
      .when(create({ fields: fields({ filters }) }))
      .thenFails({
        kind: 'validation',
        code: 'invalid_input',
        attr: 'filters',
        detail: 'Invalid variant definitions: Variant rollout percentages must sum to 100.',
      });
  });

  it('rejects a rollout percentage of 150', () => {
    given([])
      .when(
        create({
          fields: fields({ filters: { groups: [{ properties: [], rollout_percentage: 150 }] } }),
        }),
      )
      .thenFails({
        kind: 'validation',
        code: 'invalid_input',
        attr: 'filters',
        detail: 'groups[0].rollout_percentage must be between 0 and 100, got 150',
      });
  });

  it('fails on a stream that already holds a flag', () => {
    given([created()])
      .when(create({ fields: fields({ key: 'another-key' }) }))
      .thenFails({
        kind: 'validation',
        code: 'unique',
        attr: 'id',
        detail: 'A feature flag with this id already exists.',
      });
  });

  it('fails on a stream that holds a deleted flag', () => {
    given([created(), softDeleted])
      .when(create())
      .thenFails({ kind: 'validation', code: 'unique', attr: 'id' });
  });

  // validateFlagKey (DRF CharField semantics) accepts a key with surrounding whitespace and returns
  // it trimmed; the trimmed key is the one stored.
  it('stores the trimmed key that validation accepted', () => {
    given([])
      .when(create({ fields: fields({ key: '  beta-feature  ' }) }))
      .then([created({ fields: fields({ key: 'beta-feature' }) })]);
  });
});

describe('featureFlagDecider: PatchFeatureFlag', () => {
  it('carries only the fields whose value changed', () => {
    given([created()])
      .when(
        patch({
          name: 'Renamed',
          key: 'beta-feature',
          active: true,
          tags: [],
          filters: storedFilters,
        }),
      )
      .then([patched({ name: 'Renamed' })]);
  });

  it('carries every changed field with its new value', () => {
    given([created()])
      .when(
        patch({
          active: false,
          tags: ['a'],
          analytics_dashboards: [9],
          rollback_conditions: { x: 1 },
          key: 'beta-2',
        }),
      )
      .then([
        patched({
          key: 'beta-2',
          active: false,
          rollback_conditions: { x: 1 },
          tags: ['a'],
          analytics_dashboards: [9],
        }),
      ]);
  });

  it('normalizes changed filters', () => {
    given([created()])
      .when(
        patch({
          filters: {
            groups: [{ properties: [], rollout_percentage: 25 }],
            payloads: { true: [1, 'é'] },
          },
        }),
      )
      .then([
        patched({
          filters: {
            groups: [
              { properties: [], rollout_percentage: 25, aggregation_group_type_index: null },
            ],
            payloads: { true: '[1, "\\u00e9"]' },
            aggregation_group_type_index: null,
          },
        }),
      ]);
  });

  it('produces no events for a patch that changes nothing', () => {
    given([created()])
      .when(
        patch({ name: 'Beta feature', key: 'beta-feature', active: true, filters: storedFilters }),
      )
      .thenNothing();
  });

  it('produces no events for an empty patch', () => {
    given([created()]).when(patch({})).thenNothing();
  });

  // Stored filters are normalized, so the request is normalized before comparing: re-sending the
  // same filters in un-normalized form is not a change.
  it('produces no events for filters that normalize to the stored ones', () => {
    given([created()])
      .when(patch({ filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }))
      .thenNothing();
  });

  // Likewise the key is compared in its trimmed form.
  it('treats the current key padded with whitespace as unchanged', () => {
    given([created()])
      .when(patch({ key: ' beta-feature ' }))
      .thenNothing();
  });

  it('stores a renamed key trimmed', () => {
    given([created()])
      .when(patch({ key: '  beta-2 ' }))
      .then([patched({ key: 'beta-2' })]);
  });

  it('rejects invalid filters', () => {
    given([created()])
      .when(patch({ filters: { groups: [{ rollout_percentage: -1 }] } }))
      .thenFails({
        kind: 'validation',
        code: 'invalid_input',
        attr: 'filters',
        detail: 'groups[0].rollout_percentage must be between 0 and 100, got -1',
      });
  });

  it('rejects an invalid key', () => {
    given([created()])
      .when(patch({ key: 'has space' }))
      .thenFails({ kind: 'validation', code: 'invalid_key', attr: 'key' });
  });

  it('soft-deletes on deleted: true', () => {
    given([created()])
      .when(patch({ deleted: true }))
      .then([softDeleted]);
  });

  it('does nothing on deleted: true for a deleted flag', () => {
    given([created(), softDeleted])
      .when(patch({ deleted: true }))
      .thenNothing();
  });

  it('restores a deleted flag on deleted: false', () => {
    given([created(), softDeleted])
      .when(patch({ deleted: false }))
      .then([restored]);
  });

  it('restores a flag created deleted', () => {
    given([created({ deleted: true })])
      .when(patch({ deleted: false }))
      .then([restored]);
  });

  it('does nothing on deleted: false for a live flag', () => {
    given([created()])
      .when(patch({ deleted: false }))
      .thenNothing();
  });

  it('refuses to restore a flag whose key a live flag now uses', () => {
    given([created(), softDeleted])
      .when(patch({ deleted: false }, { keyTaken: true }))
      .thenFails(keyTaken);
  });

  it('restores and renames to a free key: Restored, then Patched', () => {
    given([created(), softDeleted])
      .when(patch({ deleted: false, key: 'beta-free' }))
      .then([restored, patched({ key: 'beta-free' })]);
  });

  it('refuses to rename a live flag to a taken key', () => {
    given([created()])
      .when(patch({ key: 'taken' }, { keyTaken: true }))
      .thenFails(keyTaken);
  });

  it('lets a deleted flag be renamed to a taken key', () => {
    given([created(), softDeleted])
      .when(patch({ key: 'taken' }, { keyTaken: true }))
      .then([patched({ key: 'taken' })]);
  });

  it('lets a rename to a taken key go through when the same patch deletes the flag', () => {
    given([created()])
      .when(patch({ key: 'taken', deleted: true }, { keyTaken: true }))
      .then([patched({ key: 'taken' }), softDeleted]);
  });

  it('ignores keyTaken when the key does not change', () => {
    given([created()])
      .when(patch({ name: 'N', key: 'beta-feature' }, { keyTaken: true }))
      .then([patched({ name: 'N' })]);
  });

  it('patches then soft-deletes when one command does both', () => {
    given([created()])
      .when(patch({ name: 'Last words', active: false, deleted: true }))
      .then([patched({ name: 'Last words', active: false }), softDeleted]);
  });

  it('validates changes even when the same patch deletes the flag', () => {
    given([created()])
      .when(patch({ key: 'bad key', deleted: true }))
      .thenFails({ code: 'invalid_key', attr: 'key' });
  });

  it('patches a deleted flag without restoring it', () => {
    given([created(), softDeleted])
      .when(patch({ name: 'Still gone' }))
      .then([patched({ name: 'Still gone' })]);
  });

  it('reports a patch on an absent stream as not found', () => {
    given([])
      .when(patch({ name: 'x' }))
      .thenFails(notFound);
  });

  it('reports a patch through another project as not found', () => {
    given([created()])
      .when(patch({ name: 'x' }, { projectId: OTHER_PROJECT_ID }))
      .thenFails(notFound);
  });

  it('reports not found before forbidden', () => {
    given([created(), granted(1, EDIT_ROLE)])
      .when(patch({ name: 'x' }, { projectId: OTHER_PROJECT_ID, editor: stranger }))
      .thenFails(notFound);
  });
});

describe('featureFlagDecider: role access', () => {
  it('grants a role access', () => {
    given([created()])
      .when(grant(11, EDIT_ROLE))
      .then([granted(11, EDIT_ROLE)]);
  });

  it('grants a second, different role', () => {
    given([created(), granted(11, EDIT_ROLE)])
      .when(grant(12, VIEW_ROLE))
      .then([granted(12, VIEW_ROLE)]);
  });

  it('rejects an unknown role', () => {
    given([created()])
      .when(grant(11, EDIT_ROLE, { roleExists: false }))
      .thenFails({
        kind: 'validation',
        code: 'invalid_input',
        attr: 'role_id',
        detail: 'Role does not exist.',
      });
  });

  it('rejects granting the same role twice', () => {
    given([created(), granted(11, EDIT_ROLE)])
      .when(grant(12, EDIT_ROLE))
      .thenFails({ kind: 'validation', code: 'unique', attr: 'role_id' });
  });

  it('allows granting a role again after it was revoked', () => {
    given([created(), granted(11, EDIT_ROLE), revoked(11, EDIT_ROLE)])
      .when(grant(12, EDIT_ROLE))
      .then([granted(12, EDIT_ROLE)]);
  });

  it('reports a grant on an absent flag or through another project as not found', () => {
    given([]).when(grant(11, EDIT_ROLE)).thenFails(notFound);
    given([created()])
      .when(grant(11, EDIT_ROLE, { projectId: OTHER_PROJECT_ID }))
      .thenFails(notFound);
  });

  it('revokes an entry, naming its role', () => {
    given([created(), granted(11, EDIT_ROLE), granted(12, VIEW_ROLE)])
      .when(revoke(12))
      .then([revoked(12, VIEW_ROLE)]);
  });

  it('reports revoking an unknown entry as not found', () => {
    given([created(), granted(11, EDIT_ROLE)])
      .when(revoke(99))
      .thenFails(notFound);
  });

  it('reports revoking an entry twice as not found', () => {
    given([created(), granted(11, EDIT_ROLE), revoked(11, EDIT_ROLE)])
      .when(revoke(11))
      .thenFails(notFound);
  });

  it('reports a revoke through another project as not found', () => {
    given([created(), granted(11, EDIT_ROLE)])
      .when(revoke(11, { projectId: OTHER_PROJECT_ID }))
      .thenFails(notFound);
  });

  it('forbids granting and revoking to a caller who may not edit', () => {
    const restricted = [created(), granted(11, EDIT_ROLE)];
    given(restricted)
      .when(grant(12, VIEW_ROLE, { editor: viewRoleMember }))
      .thenFails(forbidden);
    given(restricted)
      .when(revoke(11, { editor: stranger }))
      .thenFails(forbidden);
  });

  it('lets a member of a listed edit role grant and revoke', () => {
    const restricted = [created(), granted(11, EDIT_ROLE)];
    given(restricted)
      .when(grant(12, VIEW_ROLE, { editor: editRoleMember }))
      .then([granted(12, VIEW_ROLE)]);
    given(restricted)
      .when(revoke(11, { editor: editRoleMember }))
      .then([revoked(11, EDIT_ROLE)]);
  });
});

describe('featureFlagDecider: who may edit', () => {
  const restricted = [created(), granted(11, EDIT_ROLE), granted(12, VIEW_ROLE)];
  const rename = (who: FlagEditor) => patch({ name: 'Edited' }, { editor: who });
  const edited = [patched({ name: 'Edited' })];

  describe('with role access entries', () => {
    it('lets the creator edit', () => given(restricted).when(rename(creator)).then(edited));
    it('lets a project admin (level 8) edit', () =>
      given(restricted).when(rename(admin)).then(edited));
    it('lets a project owner (level 15) edit', () =>
      given(restricted).when(rename(owner)).then(edited));
    it('lets a member of a listed role with level 37 edit', () =>
      given(restricted).when(rename(editRoleMember)).then(edited));
    it('forbids a member of a listed role with level 21', () =>
      given(restricted).when(rename(viewRoleMember)).thenFails(forbidden));
    it('forbids a member of an unlisted edit role', () =>
      given(restricted).when(rename(unlistedEditRoleMember)).thenFails(forbidden));
    it('forbids a listed view role combined with an unlisted edit role', () =>
      given(restricted).when(rename(mixedMember)).thenFails(forbidden));
    it('forbids a project member without roles', () =>
      given(restricted).when(rename(stranger)).thenFails(forbidden));

    it('forbids everyone but admins when the flag has no creator', () => {
      const noCreator = [created({ createdByUserId: null }), granted(11, EDIT_ROLE)];
      given(noCreator).when(rename(stranger)).thenFails(forbidden);
      given(noCreator).when(rename(admin)).then(edited);
    });

    it('forbids deleting and restoring too', () => {
      given(restricted)
        .when(patch({ deleted: true }, { editor: viewRoleMember }))
        .thenFails(forbidden);
      given([...restricted, softDeleted])
        .when(patch({ deleted: false }, { editor: viewRoleMember }))
        .thenFails(forbidden);
    });

    it('checks permission before validating the changes', () => {
      given(restricted)
        .when(patch({ key: 'bad key' }, { editor: stranger }))
        .thenFails(forbidden);
    });
  });

  describe('without role access entries', () => {
    it.each([
      ['a project member without roles', stranger],
      ['a member of a view-level role', viewRoleMember],
      ['a member of an edit-level role', unlistedEditRoleMember],
    ])('lets %s edit', (_, who) => given([created()]).when(rename(who)).then(edited));

    it('lets anyone edit again once every entry is revoked', () => {
      given([created(), granted(11, EDIT_ROLE), revoked(11, EDIT_ROLE)])
        .when(rename(stranger))
        .then(edited);
    });
  });
});

describe('featureFlagDecider: evolve', () => {
  it('starts absent and ignores events before FeatureFlagCreated', () => {
    expect(given([]).state()).toStrictEqual({ status: 'absent' });
    expect(given([patched({ name: 'x' }), softDeleted]).state()).toStrictEqual({
      status: 'absent',
    });
  });

  it('folds Created, Patched, SoftDeleted and Restored', () => {
    const expected: FeatureFlagState = {
      status: 'present',
      flagId: FLAG_ID,
      projectId: PROJECT_ID,
      fields: fields({ name: 'Renamed', active: false }),
      deleted: false,
      createdAt: CREATED_AT,
      createdByUserId: CREATOR_ID,
      roleAccess: [],
    };
    expect(
      given([
        created(),
        patched({ name: 'Renamed', active: false }),
        softDeleted,
        restored,
      ]).state(),
    ).toStrictEqual(expected);
    expect(
      given([created(), patched({ name: 'Renamed', active: false }), softDeleted]).state(),
    ).toStrictEqual({ ...expected, deleted: true });
  });

  it('merges successive patches field by field', () => {
    const state = given([
      created(),
      patched({ name: 'A', tags: ['x'] }),
      patched({ name: 'B' }),
    ]).state();
    expect(state).toMatchObject({ fields: fields({ name: 'B', tags: ['x'] }) });
  });

  it('ignores a second FeatureFlagCreated', () => {
    const state = given([
      created(),
      created({ projectId: OTHER_PROJECT_ID, fields: fields({ key: 'other' }) }),
    ]).state();
    expect(state).toStrictEqual(given([created()]).state());
  });

  it('tracks role access entries through grants and revokes', () => {
    const state = given([
      created(),
      granted(11, EDIT_ROLE),
      granted(12, VIEW_ROLE),
      revoked(11, EDIT_ROLE),
      granted(13, UNLISTED_ROLE),
    ]).state();
    expect(state).toMatchObject({
      roleAccess: [
        { roleAccessId: 12, roleId: VIEW_ROLE, addedAt: GRANTED_AT },
        { roleAccessId: 13, roleId: UNLISTED_ROLE, addedAt: GRANTED_AT },
      ],
    });
  });

  it('yields the state a decision was made on plus its events', () => {
    // decide, then evolve with what it produced: the round trip gives the expected state
    const history = [created()];
    const outcome = given(history)
      .when(patch({ key: 'beta-2', deleted: true }))
      .outcome();
    expect(Array.isArray(outcome)).toBe(true);
    const after = given([...history, ...(outcome as FeatureFlagEvent[])]).state();
    expect(after).toMatchObject({ deleted: true, fields: { key: 'beta-2' } });
  });
});
