import type { Event } from '../../../src/core/event.ts';

/**
 * Person management facts. They name the person by a distinct id it had when the command was
 * decided (as PostHog's own API does, by emitting `$set`/`$delete_person_property` for the first
 * distinct id), so the persons fold resolves them exactly like captured events, in log order.
 */
type Base = {
  projectId: number;
  personUuid: string;
  distinctId: string;
  at: string;
  /** the read model's integer id of the person when the command was decided (activity `item_id`) */
  personId?: number;
};

export type PersonPropertiesUpdated = Event<
  'PersonPropertiesUpdated',
  Base & {
    set: Record<string, unknown>;
    /** values the changed keys had when the command was decided; a key the person lacked is left out */
    before?: Record<string, unknown>;
  }
>;
export type PersonPropertyDeleted = Event<
  'PersonPropertyDeleted',
  Base & { key: string; before?: unknown }
>;
/** every distinct id except `keepDistinctId` moves to a fresh person of its own, with no properties */
export type PersonSplit = Event<
  'PersonSplit',
  Base & { keepDistinctId: string; splitDistinctIds: string[]; wipeProperties: boolean }
>;
export type PersonDeleted = Event<
  'PersonDeleted',
  Base & { distinctIds: string[]; deleteEvents: boolean }
>;

export type PersonEvent =
  | PersonPropertiesUpdated
  | PersonPropertyDeleted
  | PersonSplit
  | PersonDeleted;
export const personEventTypes: readonly PersonEvent['type'][] = [
  'PersonPropertiesUpdated',
  'PersonPropertyDeleted',
  'PersonSplit',
  'PersonDeleted',
];

export const personStream = (projectId: number, personUuid: string) =>
  `person-${projectId}:${personUuid}`;

/**
 * `DELETE persons/:id/?delete_events=true` appends this right after PersonDeleted: the person's
 * captured events (those of `distinctIds`, up to this event's own log position) are queued for
 * deletion from ClickHouse. The deletion job runs later (processes/eventDeletion/eventDeletionJob.ts).
 */
export type PersonEventsDeletionQueued = Event<
  'PersonEventsDeletionQueued',
  {
    projectId: number;
    personUuid: string;
    personId?: number;
    distinctIds: string[];
    at: string;
  }
>;
/** The job removed the queued events from ClickHouse; the events projection skips them from now on. */
export type PersonEventsDeleted = Event<
  'PersonEventsDeleted',
  {
    projectId: number;
    personUuid: string;
    distinctIds: string[];
    /** id of the PersonEventsDeletionQueued event this completes */
    queuedEventId: string;
    /** log position (decimal string) of that event: captured events at or below it were deleted */
    upToPosition: string;
    at: string;
  }
>;
export type PersonEventDeletionEvent = PersonEventsDeletionQueued | PersonEventsDeleted;
export const personEventDeletionTypes: readonly PersonEventDeletionEvent['type'][] = [
  'PersonEventsDeletionQueued',
  'PersonEventsDeleted',
];
export const PERSON_CATEGORY = 'person';
