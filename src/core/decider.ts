import type { DomainError } from './errors.ts';
import type { Event } from './event.ts';

/** Emmett-style decider: pure functions only; the handler does all I/O. */
export type Decider<S, C, E extends Event> = Readonly<{
  initialState: () => S;
  evolve: (state: S, event: E) => S;
  decide: (command: C, state: S) => readonly E[] | DomainError;
}>;

export const fold = <S, E>(evolve: (s: S, e: E) => S, initial: S, events: readonly E[]): S =>
  events.reduce(evolve, initial);
