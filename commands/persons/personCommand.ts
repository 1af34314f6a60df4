import { eventDeletionsProjection } from '../../projections/eventDeletions/eventDeletionsProjection.ts';
import { personsProjection } from '../../projections/persons/personsProjection.ts';
import { type PersonsReader, personsReader } from '../../projections/persons/personsReader.ts';
import { type AppContext, awaitNewest } from '../../src/appContext.ts';
import { handleCommand, lastPositionOf } from '../../src/commandHandling/handleCommand.ts';
import { fail, notFound } from '../../src/core/errors.ts';
import type { EventMetadata } from '../../src/core/event.ts';
import { personStream } from './model/personEvents.ts';
import type { PersonRef } from './model/personRef.ts';
import type { PersonRecord } from './model/personView.ts';
import { type PersonCommand, type PersonFacts, personDecider } from './personDecider.ts';

/** What the person command handlers need: the log, the clock, read-your-writes and the persons reader. */
export type PersonDeps = Pick<AppContext, 'store' | 'now' | 'awaitProjection'> & {
  persons: PersonsReader;
};

/** Wires the person command handlers from the composition root's context (routes, CLI, tests). */
export const personDeps = (ctx: AppContext): PersonDeps => ({
  store: ctx.store,
  now: ctx.now,
  awaitProjection: ctx.awaitProjection,
  persons: personsReader(ctx.pool),
});

/** Which person a command is about: the `:id` of a route (integer id or uuid), in a project. */
export type PersonTarget = Readonly<{ projectId: number; ref: PersonRef }>;

/** What a person command did: the person's integer id, to read the person back by. */
export type PersonCommandResult = Readonly<{ personId: number }>;

/**
 * The facts a person decision needs, from the person as the read model shows it. Distinct ids in
 * attachment order (oldest first), as the split rule needs them.
 */
export const factsOf = (record: PersonRecord): PersonFacts => ({
  id: record.id,
  uuid: record.uuid,
  distinctIds: record.distinct_ids,
  properties: record.properties ?? {},
});

/**
 * The one shape of every person command: wait (bounded) until the persons read model has applied
 * the newest event it folds, read the person there (unknown → 404), decide against those facts and
 * the person's stream `person-<project>:<uuid>`, append, then wait until each read model has
 * applied the last new event it folds, so the caller reads its own write.
 */
export async function runPersonCommand(
  deps: PersonDeps,
  target: PersonTarget,
  metadata: EventMetadata,
  command: (person: PersonFacts, at: string) => PersonCommand,
): Promise<PersonCommandResult> {
  await awaitNewest(deps, personsProjection.filter, personsProjection);
  const person = await deps.persons.getPerson(target.projectId, target.ref);
  if (!person) fail(notFound());
  const result = await handleCommand(
    deps.store,
    personStream(target.projectId, person.uuid),
    personDecider,
    command(factsOf(person), deps.now().toISOString()),
    metadata,
  );
  // Each read model waits for the last new event it folds (it never reaches one it does not).
  await deps.awaitProjection(
    personsProjection,
    lastPositionOf(result.appended, personsProjection.filter.eventTypes),
  );
  await deps.awaitProjection(
    eventDeletionsProjection,
    lastPositionOf(result.appended, eventDeletionsProjection.filter.eventTypes),
  );
  return { personId: person.id };
}
