import { expect } from 'vitest';
import type { Decider } from '../../src/core/decider.ts';
import { type DomainError, isDomainError } from '../../src/core/errors.ts';
import type { Event } from '../../src/core/event.ts';

/**
 * Emmett-style decider specification: pure, no I/O.
 *
 *   const given = DeciderSpecification.for(featureFlagDecider);
 *   given([created]).when(patch).then([patched]);
 *   given([]).when(patch).thenFails({ kind: 'not_found' });
 *
 * Given events are folded with `evolve` from `initialState()`, the command is decided against the
 * resulting state, and the outcome is compared exactly with the expectation (`toStrictEqual`, so
 * an extra `undefined`-valued key fails too). The given events and the command are deep-frozen
 * first, so a decider that mutates its input fails loudly.
 */

type Outcome<E> = readonly E[] | DomainError;

export type DeciderThen<E extends Event> = Readonly<{
  /** decide succeeded and produced exactly these events, in this order */
  then: (expectedEvents: readonly E[]) => void;
  /** decide succeeded and produced no events (an idempotent no-op) */
  thenNothing: () => void;
  /** decide returned a DomainError matching every given field */
  thenFails: (expected: Partial<DomainError>) => void;
  /** the raw outcome, for assertions the helpers above do not cover */
  outcome: () => Outcome<E>;
}>;

export type DeciderGiven<S, C, E extends Event> = (givenEvents: readonly E[]) => Readonly<{
  when: (command: C) => DeciderThen<E>;
  /** the state the given events fold to */
  state: () => S;
}>;

const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    // Maps and Sets cannot be frozen meaningfully; leave them (and their contents) alone.
    if (value instanceof Map || value instanceof Set) return value;
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
};

const describeOutcome = (outcome: unknown) => JSON.stringify(outcome, null, 2);

export const DeciderSpecification = {
  for<S, C, E extends Event>(decider: Decider<S, C, E>): DeciderGiven<S, C, E> {
    return (givenEvents) => {
      const state = () => deepFreeze(givenEvents).reduce(decider.evolve, decider.initialState());
      return {
        state,
        when: (command) => {
          const outcome = (): Outcome<E> => decider.decide(deepFreeze(command), state());
          const events = (): readonly E[] => {
            const result = outcome();
            if (isDomainError(result)) {
              expect.fail(
                `expected events, but decide returned a DomainError: ${describeOutcome(result)}`,
              );
            }
            return result;
          };
          return {
            outcome,
            // biome-ignore lint/suspicious/noThenProperty: Given / When / Then is the spec's language; no one awaits it
            then: (expectedEvents) => {
              expect(events()).toStrictEqual(expectedEvents);
            },
            thenNothing: () => {
              expect(events()).toStrictEqual([]);
            },
            thenFails: (expected) => {
              const result = outcome();
              if (!isDomainError(result)) {
                expect.fail(
                  `expected a DomainError, but decide returned events: ${describeOutcome(result)}`,
                );
              }
              expect(result).toMatchObject(expected);
            },
          };
        },
      };
    };
  },
};
