import type { EventMetadata } from '../../src/core/event.ts';
import {
  type PersonCommandResult,
  type PersonDeps,
  type PersonTarget,
  runPersonCommand,
} from './personCommand.ts';

export type DeletePersonPropertyInput = PersonTarget & Readonly<{ key: string }>;

/** Removes one person property (delete_property/); a key the person lacks appends nothing. */
export const deletePersonProperty = (
  deps: PersonDeps,
  input: DeletePersonPropertyInput,
  metadata: EventMetadata,
): Promise<PersonCommandResult> =>
  runPersonCommand(deps, input, metadata, (person, at) => ({
    type: 'DeletePersonProperty',
    projectId: input.projectId,
    person,
    at,
    key: input.key,
  }));
