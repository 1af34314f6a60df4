import { describe, expect, it } from 'vitest';
import {
  projectDecider,
  roleDecider,
  userDecider,
} from '../../../commands/access/accessDeciders.ts';
import type {
  PersonalApiKeyCreated,
  PersonalApiKeyDeleted,
  ProjectCreated,
  ProjectMemberAdded,
  RoleCreated,
  RoleMemberAdded,
  UserCreated,
} from '../../../commands/access/model/accessEvents.ts';
import { personalApiKeyDecider } from '../../../commands/access/personalApiKeyDecider.ts';
import { DeciderSpecification } from '../../support/deciderSpec.ts';

const AT = '2024-05-01T10:00:00.000Z';
const ROLE_ID = '0190a0b0-0000-7000-8000-000000000037';

const conflict = (what: string) =>
  ({
    kind: 'conflict',
    code: 'already_exists',
    detail: `${what} already exists.`,
    attr: null,
  }) as const;

describe('projectDecider', () => {
  const given = DeciderSpecification.for(projectDecider);
  const projectData: ProjectCreated['data'] = {
    projectId: 1,
    name: 'Default project',
    apiKeyHash: 'sha256$abc',
    apiKeyMask: 'phc_...xyz',
    createdByUserId: 100,
    createdAt: AT,
  };
  const projectCreated: ProjectCreated = { type: 'ProjectCreated', data: projectData };
  const member = (userId: number, level = 1): ProjectMemberAdded => ({
    type: 'ProjectMemberAdded',
    data: { projectId: 1, userId, level },
  });

  it('creates a project', () => {
    given([]).when({ type: 'CreateProject', data: projectData }).then([projectCreated]);
  });

  it('fails with a conflict when the project already exists', () => {
    given([projectCreated])
      .when({ type: 'CreateProject', data: { ...projectData, name: 'Other' } })
      .thenFails(conflict('Project'));
  });

  it('resets the project API key of an existing project only', () => {
    const reset = { projectId: 1, apiKeyHash: 'sha256$new', apiKeyMask: 'phc_...new', resetAt: AT };
    given([projectCreated])
      .when({ type: 'ResetProjectApiKey', data: reset })
      .then([{ type: 'ProjectApiKeyReset', data: reset }]);
    given([])
      .when({ type: 'ResetProjectApiKey', data: reset })
      .thenFails({ kind: 'not_found', code: 'not_found' });
  });

  it('adds a member', () => {
    given([projectCreated])
      .when({ type: 'AddProjectMember', data: member(100, 8).data })
      .then([member(100, 8)]);
  });

  it('adds a second, different member', () => {
    given([projectCreated, member(100, 8)])
      .when({ type: 'AddProjectMember', data: member(101).data })
      .then([member(101)]);
  });

  it('produces no events when the user already is a member', () => {
    given([projectCreated, member(100)])
      .when({ type: 'AddProjectMember', data: member(100).data })
      .thenNothing();
  });

  // Existing behaviour, pinned: a repeated add is idempotent even with a different level, so it
  // cannot be used to promote a member.
  it('ignores a repeated add with another level', () => {
    given([projectCreated, member(100, 1)])
      .when({ type: 'AddProjectMember', data: member(100, 8).data })
      .thenNothing();
  });

  it('reports adding a member to an absent project as not found', () => {
    given([])
      .when({ type: 'AddProjectMember', data: member(100).data })
      .thenFails({
        kind: 'not_found',
        code: 'not_found',
        detail: 'Project not found.',
      });
  });

  it('folds membership into state', () => {
    expect(given([]).state()).toMatchObject({ exists: false });
    const state = given([projectCreated, member(100), member(101), member(100)]).state();
    expect(state.exists).toBe(true);
    expect([...state.members].sort()).toStrictEqual([100, 101]);
  });

  it('does not leak members between streams through the shared initial state', () => {
    given([projectCreated, member(100)]).state();
    expect(given([projectCreated]).state().members.size).toBe(0);
  });
});

describe('userDecider', () => {
  const given = DeciderSpecification.for(userDecider);
  const data: UserCreated['data'] = {
    userId: 100,
    uuid: '0190a0b0-0000-7000-8000-000000000100',
    distinctId: 'distinct-100',
    email: 'ada@example.com',
    firstName: 'Ada',
    lastName: 'Lovelace',
    createdAt: AT,
  };
  const userCreated: UserCreated = { type: 'UserCreated', data };

  it('creates a user', () => {
    given([]).when({ type: 'CreateUser', data }).then([userCreated]);
  });

  it('fails with a conflict when the user already exists', () => {
    given([userCreated]).when({ type: 'CreateUser', data }).thenFails(conflict('User'));
  });
});

describe('personalApiKeyDecider', () => {
  const given = DeciderSpecification.for(personalApiKeyDecider);
  const data: PersonalApiKeyCreated['data'] = {
    keyId: 'key-1',
    userId: 100,
    label: 'CI',
    secureValue: 'sha256$def',
    maskValue: 'phx_...abc',
    scopes: ['feature_flag:read', 'feature_flag:write'],
    scopedProjectIds: null,
    createdAt: AT,
  };
  const keyCreated: PersonalApiKeyCreated = { type: 'PersonalApiKeyCreated', data };

  it('creates a personal API key', () => {
    given([]).when({ type: 'CreatePersonalApiKey', data }).then([keyCreated]);
  });

  it('creates a project-scoped key as given', () => {
    const scoped = { ...data, scopedProjectIds: [1, 2] };
    given([])
      .when({ type: 'CreatePersonalApiKey', data: scoped })
      .then([{ type: 'PersonalApiKeyCreated', data: scoped }]);
  });

  it('fails with a conflict when the key already exists', () => {
    given([keyCreated])
      .when({ type: 'CreatePersonalApiKey', data })
      .thenFails(conflict('Personal API key'));
  });

  const missing = { kind: 'not_found', code: 'not_found' } as const;
  const rolled = {
    keyId: 'key-1',
    secureValue: 'sha256$new',
    maskValue: 'phx_...new',
    rolledAt: AT,
  };
  const deleted: PersonalApiKeyDeleted = {
    type: 'PersonalApiKeyDeleted',
    data: { keyId: 'key-1', deletedAt: AT },
  };

  it('updates only what changes, and nothing when nothing does', () => {
    given([keyCreated])
      .when({
        type: 'UpdatePersonalApiKey',
        byUserId: 100,
        data: { keyId: 'key-1', label: 'CI 2', scopes: data.scopes, updatedAt: AT },
      })
      .then([
        { type: 'PersonalApiKeyUpdated', data: { keyId: 'key-1', label: 'CI 2', updatedAt: AT } },
      ]);
    given([keyCreated])
      .when({
        type: 'UpdatePersonalApiKey',
        byUserId: 100,
        data: { keyId: 'key-1', label: 'CI', scopedProjectIds: null, updatedAt: AT },
      })
      .thenNothing();
  });

  it("rolls and deletes the holder's key; the operator (null) may act on any key", () => {
    given([keyCreated])
      .when({ type: 'RollPersonalApiKey', byUserId: 100, data: rolled })
      .then([{ type: 'PersonalApiKeyRolled', data: rolled }]);
    given([keyCreated])
      .when({ type: 'DeletePersonalApiKey', byUserId: null, data: deleted.data })
      .then([deleted]);
  });

  it("answers another user's key, a deleted key and a missing key as not found", () => {
    given([keyCreated])
      .when({ type: 'RollPersonalApiKey', byUserId: 101, data: rolled })
      .thenFails(missing);
    given([keyCreated, deleted])
      .when({ type: 'DeletePersonalApiKey', byUserId: 100, data: deleted.data })
      .thenFails(missing);
    given([]).when({ type: 'RollPersonalApiKey', byUserId: null, data: rolled }).thenFails(missing);
  });
});

describe('roleDecider', () => {
  const given = DeciderSpecification.for(roleDecider);
  const roleData = (featureFlagsAccessLevel: number): RoleCreated['data'] => ({
    roleId: ROLE_ID,
    name: 'Flag editors',
    featureFlagsAccessLevel,
    createdByUserId: 100,
    createdAt: AT,
  });
  const roleCreated = (level = 37): RoleCreated => ({ type: 'RoleCreated', data: roleData(level) });
  const member = (userId: number): RoleMemberAdded => ({
    type: 'RoleMemberAdded',
    data: { roleId: ROLE_ID, userId, addedAt: AT },
  });

  it.each([21, 37])('creates a role with flag access level %i', (level) => {
    given([])
      .when({ type: 'CreateRole', data: roleData(level) })
      .then([roleCreated(level)]);
  });

  it.each([0, 1, 8, 15, 20, 22, 36, 38])('rejects flag access level %i', (level) => {
    given([])
      .when({ type: 'CreateRole', data: roleData(level) })
      .thenFails({
        kind: 'validation',
        code: 'invalid_input',
        attr: 'feature_flags_access_level',
        detail: 'Access level must be 21 (view) or 37 (edit).',
      });
  });

  it('fails with a conflict when the role already exists', () => {
    given([roleCreated()])
      .when({ type: 'CreateRole', data: roleData(21) })
      .thenFails(conflict('Role'));
  });

  it('reports an existing role as a conflict even when the new level is invalid', () => {
    given([roleCreated()])
      .when({ type: 'CreateRole', data: roleData(5) })
      .thenFails({ kind: 'conflict' });
  });

  it('adds a member', () => {
    given([roleCreated()])
      .when({ type: 'AddRoleMember', data: member(100).data })
      .then([member(100)]);
  });

  it('produces no events when the user already is a member', () => {
    given([roleCreated(), member(100)])
      .when({ type: 'AddRoleMember', data: member(100).data })
      .thenNothing();
  });

  it('adds another member after the first', () => {
    given([roleCreated(), member(100)])
      .when({ type: 'AddRoleMember', data: member(101).data })
      .then([member(101)]);
  });

  it('reports adding a member to an absent role as not found', () => {
    given([])
      .when({ type: 'AddRoleMember', data: member(100).data })
      .thenFails({
        kind: 'not_found',
        code: 'not_found',
        detail: 'Role not found.',
      });
  });
});
