import type { Decider } from '../core/decider.ts';
import { DomainFailure, isDomainError } from '../core/errors.ts';
import type { Event, EventMetadata } from '../core/event.ts';
import {
  type AppendedEvent,
  type EventStore,
  type ExpectedRevision,
  WrongExpectedRevisionError,
} from '../eventStore/eventStore.ts';

export type HandleResult<S, E extends Event> = Readonly<{
  state: S;
  newEvents: readonly E[];
  /** where each new event landed in the log, in order */
  appended: readonly AppendedEvent[];
  /** global position of the last appended event, or undefined when nothing was appended */
  position: bigint | undefined;
}>;

/** The position of the last appended event of one of `types`, for the read model that folds them. */
export const lastPositionOf = (
  appended: readonly AppendedEvent[],
  types: readonly string[] | undefined,
) => appended.filter((e) => types?.includes(e.type)).at(-1)?.position;

/**
 * read → fold → decide → append with the revision read. A concurrent writer makes the append fail;
 * the whole cycle is then retried against the new state, a bounded number of times.
 */
export async function handleCommand<S, C, E extends Event>(
  store: EventStore,
  streamName: string,
  decider: Decider<S, C, E>,
  command: C,
  metadata: EventMetadata,
  options: { maxRetries?: number } = {},
): Promise<HandleResult<S, E>> {
  const maxRetries = options.maxRetries ?? 5;
  for (let attempt = 0; ; attempt++) {
    const history = await store.readStream<E>(streamName);
    const state = history.reduce((s, e) => decider.evolve(s, e), decider.initialState());
    const decision = decider.decide(command, state);
    if (isDomainError(decision)) throw new DomainFailure(decision);
    if (decision.length === 0) return { state, newEvents: [], appended: [], position: undefined };
    const last = history[history.length - 1];
    const expectedRevision: ExpectedRevision = last ? last.revision : 'no_stream';
    try {
      const result = await store.appendToStream(
        streamName,
        decision.map((e) => ({ type: e.type, data: e.data, metadata })),
        { expectedRevision },
      );
      return {
        state: decision.reduce((s, e) => decider.evolve(s, e), state),
        newEvents: decision,
        appended: result.appended,
        position: result.position,
      };
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError && attempt < maxRetries) continue;
      throw error;
    }
  }
}
