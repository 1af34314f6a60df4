import { match } from 'ts-pattern';
import type { Decider } from '../../src/core/decider.ts';
import { domainError } from '../../src/core/errors.ts';
import type {
  PersonalApiKeyCreated,
  PersonalApiKeyDeleted,
  PersonalApiKeyRolled,
  PersonalApiKeyUpdated,
} from './model/accessEvents.ts';

export type PersonalApiKeyEvent =
  | PersonalApiKeyCreated
  | PersonalApiKeyUpdated
  | PersonalApiKeyRolled
  | PersonalApiKeyDeleted;

/** What a key's own stream says about it: whose it is and what a PATCH could change. */
export type PersonalApiKeyState = Readonly<{
  status: 'absent' | 'live' | 'deleted';
  userId: number | null;
  label: string;
  scopes: readonly string[];
  scopedProjectIds: readonly number[] | null;
}>;

/**
 * `byUserId`: the user acting through the API, who may touch only their own keys (PostHog lists
 * and edits only the caller's keys); null: the operator at the CLI, who may touch any key.
 */
export type PersonalApiKeyCommand =
  | { type: 'CreatePersonalApiKey'; data: PersonalApiKeyCreated['data'] }
  | { type: 'UpdatePersonalApiKey'; byUserId: number | null; data: PersonalApiKeyUpdated['data'] }
  | { type: 'RollPersonalApiKey'; byUserId: number | null; data: PersonalApiKeyRolled['data'] }
  | { type: 'DeletePersonalApiKey'; byUserId: number | null; data: PersonalApiKeyDeleted['data'] };

const absent: PersonalApiKeyState = {
  status: 'absent',
  userId: null,
  label: '',
  scopes: [],
  scopedProjectIds: null,
};

// Another user's key answers as a missing one: its existence is not the caller's business.
const notFound = () => domainError('not_found', 'not_found', 'Personal API key not found.');

const sameList = (a: readonly unknown[] | null, b: readonly unknown[] | null) =>
  a === null || b === null ? a === b : a.length === b.length && a.every((v, i) => v === b[i]);

/** Only the fields that differ: a PATCH that changes nothing appends nothing. */
function changes(
  state: PersonalApiKeyState,
  d: PersonalApiKeyUpdated['data'],
): PersonalApiKeyUpdated['data'] | undefined {
  const label = d.label !== undefined && d.label !== state.label ? { label: d.label } : {};
  const scopes =
    d.scopes !== undefined && !sameList(d.scopes, state.scopes) ? { scopes: d.scopes } : {};
  const projects =
    d.scopedProjectIds !== undefined && !sameList(d.scopedProjectIds, state.scopedProjectIds)
      ? { scopedProjectIds: d.scopedProjectIds }
      : {};
  const changed = { ...label, ...scopes, ...projects };
  return Object.keys(changed).length === 0
    ? undefined
    : { keyId: d.keyId, ...changed, updatedAt: d.updatedAt };
}

export const personalApiKeyDecider: Decider<
  PersonalApiKeyState,
  PersonalApiKeyCommand,
  PersonalApiKeyEvent
> = {
  initialState: () => absent,
  evolve: (state, event) =>
    match(event)
      .with({ type: 'PersonalApiKeyCreated' }, ({ data: d }) => ({
        status: 'live' as const,
        userId: d.userId,
        label: d.label,
        scopes: d.scopes,
        scopedProjectIds: d.scopedProjectIds,
      }))
      .with({ type: 'PersonalApiKeyUpdated' }, ({ data: d }) => ({
        ...state,
        ...(d.label !== undefined ? { label: d.label } : {}),
        ...(d.scopes !== undefined ? { scopes: d.scopes } : {}),
        ...(d.scopedProjectIds !== undefined ? { scopedProjectIds: d.scopedProjectIds } : {}),
      }))
      .with({ type: 'PersonalApiKeyRolled' }, () => state)
      .with({ type: 'PersonalApiKeyDeleted' }, () => ({ ...state, status: 'deleted' as const }))
      .exhaustive(),
  decide: (command, state) => {
    if (command.type === 'CreatePersonalApiKey')
      return state.status === 'absent'
        ? [{ type: 'PersonalApiKeyCreated', data: command.data }]
        : domainError('conflict', 'already_exists', 'Personal API key already exists.');
    if (state.status !== 'live' || (command.byUserId !== null && command.byUserId !== state.userId))
      return notFound();
    return match(command)
      .with({ type: 'UpdatePersonalApiKey' }, (c) => {
        const changed = changes(state, c.data);
        return changed ? [{ type: 'PersonalApiKeyUpdated' as const, data: changed }] : [];
      })
      .with({ type: 'RollPersonalApiKey' }, (c) => [
        { type: 'PersonalApiKeyRolled' as const, data: c.data },
      ])
      .with({ type: 'DeletePersonalApiKey' }, (c) => [
        { type: 'PersonalApiKeyDeleted' as const, data: c.data },
      ])
      .exhaustive();
  },
};
