import type { Event } from '../../src/core/event.ts';

/**
 * Person management facts. They name the person by a distinct id it had when the command was
 * decided (as PostHog's own API does, by emitting `$set`/`$delete_person_property` for the first
 * distinct id), so the persons fold resolves them exactly like captured events, in log order.
 */
type Base = { projectId: number; personUuid: string; distinctId: string; at: string };

export type PersonPropertiesUpdated = Event<'PersonPropertiesUpdated', Base & { set: Record<string, unknown> }>;
export type PersonPropertyDeleted = Event<'PersonPropertyDeleted', Base & { key: string }>;
/** every distinct id except `keepDistinctId` moves to a fresh person of its own, with no properties */
export type PersonSplit = Event<'PersonSplit', Base & { keepDistinctId: string; splitDistinctIds: string[]; wipeProperties: boolean }>;
export type PersonDeleted = Event<'PersonDeleted', Base & { distinctIds: string[]; deleteEvents: boolean }>;

export type PersonEvent = PersonPropertiesUpdated | PersonPropertyDeleted | PersonSplit | PersonDeleted;
export const personEventTypes: readonly PersonEvent['type'][] = ['PersonPropertiesUpdated', 'PersonPropertyDeleted', 'PersonSplit', 'PersonDeleted'];

export const personStream = (projectId: number, personUuid: string) => `person-${projectId}:${personUuid}`;
