import { match } from 'ts-pattern';
import type { Decider } from '../../src/core/decider.ts';
import { domainError } from '../../src/core/errors.ts';
import type {
  ProjectApiKeyReset,
  ProjectCreated,
  ProjectMemberAdded,
  RoleCreated,
  RoleMemberAdded,
  UserCreated,
} from './model/accessEvents.ts';

const alreadyExists = (what: string) =>
  domainError('conflict', 'already_exists', `${what} already exists.`);

type MemberSet = Readonly<{ exists: boolean; members: ReadonlySet<number> }>;
const noMembers: MemberSet = { exists: false, members: new Set() };

export type ProjectCommand =
  | { type: 'CreateProject'; data: ProjectCreated['data'] }
  | { type: 'AddProjectMember'; data: ProjectMemberAdded['data'] }
  | { type: 'ResetProjectApiKey'; data: ProjectApiKeyReset['data'] };

export const projectDecider: Decider<
  MemberSet,
  ProjectCommand,
  ProjectCreated | ProjectMemberAdded | ProjectApiKeyReset
> = {
  initialState: () => noMembers,
  evolve: (state, event) =>
    match(event)
      .with({ type: 'ProjectCreated' }, () => ({ ...state, exists: true }))
      .with({ type: 'ProjectMemberAdded' }, (e) => ({
        ...state,
        members: new Set([...state.members, e.data.userId]),
      }))
      .with({ type: 'ProjectApiKeyReset' }, () => state)
      .exhaustive(),
  decide: (command, state) =>
    match(command)
      .with({ type: 'CreateProject' }, (c) =>
        state.exists
          ? alreadyExists('Project')
          : [{ type: 'ProjectCreated' as const, data: c.data }],
      )
      .with({ type: 'AddProjectMember' }, (c) => {
        if (!state.exists) return domainError('not_found', 'not_found', 'Project not found.');
        if (state.members.has(c.data.userId)) return [];
        return [{ type: 'ProjectMemberAdded' as const, data: c.data }];
      })
      .with({ type: 'ResetProjectApiKey' }, (c) =>
        state.exists
          ? [{ type: 'ProjectApiKeyReset' as const, data: c.data }]
          : domainError('not_found', 'not_found', 'Project not found.'),
      )
      .exhaustive(),
};

export type CreateUser = { type: 'CreateUser'; data: UserCreated['data'] };
export const userDecider: Decider<boolean, CreateUser, UserCreated> = {
  initialState: () => false,
  evolve: () => true,
  decide: (command, exists) =>
    exists ? alreadyExists('User') : [{ type: 'UserCreated', data: command.data }],
};

export type RoleCommand =
  | { type: 'CreateRole'; data: RoleCreated['data'] }
  | { type: 'AddRoleMember'; data: RoleMemberAdded['data'] };

export const roleDecider: Decider<MemberSet, RoleCommand, RoleCreated | RoleMemberAdded> = {
  initialState: () => noMembers,
  evolve: (state, event) =>
    match(event)
      .with({ type: 'RoleCreated' }, () => ({ ...state, exists: true }))
      .with({ type: 'RoleMemberAdded' }, (e) => ({
        ...state,
        members: new Set([...state.members, e.data.userId]),
      }))
      .exhaustive(),
  decide: (command, state) =>
    match(command)
      .with({ type: 'CreateRole' }, (c) => {
        if (state.exists) return alreadyExists('Role');
        if (![21, 37].includes(c.data.featureFlagsAccessLevel))
          return domainError(
            'validation',
            'invalid_input',
            'Access level must be 21 (view) or 37 (edit).',
            'feature_flags_access_level',
          );
        return [{ type: 'RoleCreated' as const, data: c.data }];
      })
      .with({ type: 'AddRoleMember' }, (c) => {
        if (!state.exists) return domainError('not_found', 'not_found', 'Role not found.');
        if (state.members.has(c.data.userId)) return [];
        return [{ type: 'RoleMemberAdded' as const, data: c.data }];
      })
      .exhaustive(),
};
