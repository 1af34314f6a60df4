import type { EventMetadata } from '../../src/core/event.ts';
import {
  type PersonCommandResult,
  type PersonDeps,
  type PersonTarget,
  runPersonCommand,
} from './personCommand.ts';

export type SplitPersonInput = PersonTarget & Readonly<{ mainDistinctId?: string }>;

/**
 * Splits the person (split/): every distinct id but the kept one gets a fresh person of its own.
 * Without `mainDistinctId` the oldest id stays and the properties are wiped.
 */
export const splitPerson = (
  deps: PersonDeps,
  input: SplitPersonInput,
  metadata: EventMetadata,
): Promise<PersonCommandResult> =>
  runPersonCommand(deps, input, metadata, (person, at) => ({
    type: 'SplitPerson',
    projectId: input.projectId,
    person,
    at,
    ...(input.mainDistinctId !== undefined ? { mainDistinctId: input.mainDistinctId } : {}),
  }));
