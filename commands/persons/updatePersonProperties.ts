import type { EventMetadata } from '../../src/core/event.ts';
import {
  type PersonCommandResult,
  type PersonDeps,
  type PersonTarget,
  runPersonCommand,
} from './personCommand.ts';

export type UpdatePersonPropertiesInput = PersonTarget & Readonly<{ set: Record<string, unknown> }>;

/**
 * Sets person properties (PATCH persons/:id/, update_property/); other keys are kept. Only keys
 * whose value changes are recorded: when nothing changes, nothing is appended.
 */
export const updatePersonProperties = (
  deps: PersonDeps,
  input: UpdatePersonPropertiesInput,
  metadata: EventMetadata,
): Promise<PersonCommandResult> =>
  runPersonCommand(deps, input, metadata, (person, at) => ({
    type: 'UpdatePersonProperties',
    projectId: input.projectId,
    person,
    at,
    set: input.set,
  }));
