import type { Event } from '../../../src/core/event.ts';

/** Access control is event-sourced like everything else: who could do what, and since when, is in the log. */
export type ProjectCreated = Event<
  'ProjectCreated',
  {
    projectId: number;
    name: string;
    apiKeyHash: string;
    apiKeyMask: string;
    createdByUserId: number;
    createdAt: string;
  }
>;
/** level follows PostHog's membership levels: 1 member, 8 admin, 15 owner */
export type ProjectMemberAdded = Event<
  'ProjectMemberAdded',
  { projectId: number; userId: number; level: number }
>;
export type UserCreated = Event<
  'UserCreated',
  {
    userId: number;
    uuid: string;
    distinctId: string;
    email: string;
    firstName: string;
    lastName: string;
    createdAt: string;
  }
>;
export type PersonalApiKeyCreated = Event<
  'PersonalApiKeyCreated',
  {
    keyId: string;
    userId: number;
    label: string;
    secureValue: string;
    maskValue: string;
    scopes: string[];
    /** null: every project the user belongs to */
    scopedProjectIds: number[] | null;
    createdAt: string;
  }
>;
/**
 * A key's label or scopes changed (PATCH). Only the fields given change; who changed it is the
 * event's metadata (user, key used), as for every access event.
 */
export type PersonalApiKeyUpdated = Event<
  'PersonalApiKeyUpdated',
  {
    keyId: string;
    label?: string;
    scopes?: string[];
    /** null: every project the user belongs to */
    scopedProjectIds?: number[] | null;
    updatedAt: string;
  }
>;
/** A new value for the key: the old one is refused from the moment this is projected. */
export type PersonalApiKeyRolled = Event<
  'PersonalApiKeyRolled',
  { keyId: string; secureValue: string; maskValue: string; rolledAt: string }
>;
/** The key is revoked: refused from the moment this is projected, and gone from the lists. */
export type PersonalApiKeyDeleted = Event<
  'PersonalApiKeyDeleted',
  { keyId: string; deletedAt: string }
>;
/** The project API key was replaced (reset_token): capture and flags refuse the old one. */
export type ProjectApiKeyReset = Event<
  'ProjectApiKeyReset',
  { projectId: number; apiKeyHash: string; apiKeyMask: string; resetAt: string }
>;
export type RoleCreated = Event<
  'RoleCreated',
  {
    roleId: string;
    name: string;
    featureFlagsAccessLevel: number;
    createdByUserId: number | null;
    createdAt: string;
  }
>;
export type RoleMemberAdded = Event<
  'RoleMemberAdded',
  { roleId: string; userId: number; addedAt: string }
>;

export type AccessEvent =
  | ProjectCreated
  | ProjectMemberAdded
  | UserCreated
  | PersonalApiKeyCreated
  | PersonalApiKeyUpdated
  | PersonalApiKeyRolled
  | PersonalApiKeyDeleted
  | ProjectApiKeyReset
  | RoleCreated
  | RoleMemberAdded;

export const accessEventTypes: readonly AccessEvent['type'][] = [
  'ProjectCreated',
  'ProjectMemberAdded',
  'UserCreated',
  'PersonalApiKeyCreated',
  'PersonalApiKeyUpdated',
  'PersonalApiKeyRolled',
  'PersonalApiKeyDeleted',
  'ProjectApiKeyReset',
  'RoleCreated',
  'RoleMemberAdded',
];

export const projectStream = (id: number) => `project-${id}`;
export const userStream = (id: number) => `user-${id}`;
export const personalApiKeyStream = (id: string) => `personal_api_key-${id}`;
export const roleStream = (id: string) => `role-${id}`;

export const ACCESS_LEVEL = { member: 1, admin: 8, owner: 15 } as const;
