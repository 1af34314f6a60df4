import { isDeepStrictEqual } from 'node:util';
import { match } from 'ts-pattern';
import type { Decider } from '../../src/core/decider.ts';
import { type DomainError, notFound, validation } from '../../src/core/errors.ts';
import {
  type ActionEvent,
  type ActionFields,
  type ActionState,
  actionFieldNames,
  evolveAction,
  initialActionState,
} from './model/action.ts';

export type CreateAction = Readonly<{
  type: 'CreateAction';
  actionId: number;
  projectId: number;
  fields: ActionFields;
  createdAt: string;
  createdByUserId: number | null;
  /** a live action of the project with this name, looked up by the handler (PostHog: 400) */
  nameTakenBy: number | null;
}>;
export type PatchAction = Readonly<{
  type: 'PatchAction';
  actionId: number;
  projectId: number;
  changes: Partial<ActionFields> & { deleted?: boolean };
  nameTakenBy: number | null;
  /** PostHog pins at its own clock, not at the time the client sent */
  now: string;
}>;
export type ActionCommand = CreateAction | PatchAction;

const nameTaken = (id: number): DomainError =>
  validation('unique', `This project already has an action with this name, ID ${id}`, 'name');

/**
 * Create once; a patch records only what changes. A name is unique among the project's live
 * actions; a blank name is refused. `pinned_at` pins at this moment (a pinned action stays pinned
 * at its first time), null unpins. A soft-deleted action is restored with `deleted: false`.
 */
function decide(command: ActionCommand, state: ActionState): ActionEvent[] | DomainError {
  return match(command)
    .with({ type: 'CreateAction' }, (c): ActionEvent[] | DomainError => {
      if (state.status === 'present') return [];
      if (c.nameTakenBy !== null) return nameTaken(c.nameTakenBy);
      const { type: _t, nameTakenBy: _n, ...data } = c;
      return [{ type: 'ActionCreated', data }];
    })
    .with({ type: 'PatchAction' }, (c): ActionEvent[] | DomainError => {
      if (state.status === 'absent' || state.projectId !== c.projectId) return notFound();
      const wanted = { ...c.changes };
      if (wanted.pinned_at)
        wanted.pinned_at = state.fields.pinned_at === null ? c.now : state.fields.pinned_at;
      const changes: Partial<ActionFields> = {};
      for (const name of actionFieldNames) {
        const value = wanted[name];
        if (value !== undefined && !isDeepStrictEqual(value, state.fields[name]))
          Object.assign(changes, { [name]: value });
      }
      if (changes.name !== undefined && c.nameTakenBy !== null) return nameTaken(c.nameTakenBy);
      const events: ActionEvent[] = [];
      if (Object.keys(changes).length > 0)
        events.push({ type: 'ActionUpdated', data: { actionId: c.actionId, changes } });
      if (c.changes.deleted === true && !state.deleted)
        events.push({ type: 'ActionSoftDeleted', data: { actionId: c.actionId } });
      if (c.changes.deleted === false && state.deleted)
        events.push({ type: 'ActionRestored', data: { actionId: c.actionId } });
      return events;
    })
    .exhaustive();
}

export const actionDecider: Decider<ActionState, ActionCommand, ActionEvent> = {
  initialState: initialActionState,
  evolve: evolveAction,
  decide,
};
