import type { EventMetadata } from '../../src/core/event.ts';
import {
  type PersonCommandResult,
  type PersonDeps,
  type PersonTarget,
  runPersonCommand,
} from './personCommand.ts';

export type DeletePersonInput = PersonTarget & Readonly<{ deleteEvents: boolean }>;

/**
 * Deletes the person (DELETE persons/:id/). With `deleteEvents` its captured events are queued
 * for deletion too; the deletion process (processes/eventDeletion/) removes them later.
 */
export const deletePerson = (
  deps: PersonDeps,
  input: DeletePersonInput,
  metadata: EventMetadata,
): Promise<PersonCommandResult> =>
  runPersonCommand(deps, input, metadata, (person, at) => ({
    type: 'DeletePerson',
    projectId: input.projectId,
    person,
    at,
    deleteEvents: input.deleteEvents,
  }));
