import type { EventCapturedData } from '../../commands/capture/model/eventCaptured.ts';
import { type PersonEvent, personEventTypes } from '../../commands/persons/model/personEvents.ts';
import type { WorkingSet } from '../../projections/persons/personsFold.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { readAllEvents } from '../../src/eventStore/readAllEvents.ts';

/** Exactly the events the persons projection folds (its `filter`), so a replay reproduces it. */
export const PERSON_LOG_TYPES: readonly string[] = ['EventCaptured', ...personEventTypes];

/**
 * Every person-relevant event of the log, all projects, in log order, up to the head as it was
 * when the replay started (later appends are not seen, so one answer reads one consistent prefix).
 * O(log): there is no index by time or person yet; fine while logs are small.
 */
export async function replayLog(
  store: EventStore,
  visit: (event: RecordedEvent) => void,
): Promise<number> {
  const head = await store.headPosition();
  let count = 0;
  for await (const event of readAllEvents(store, { eventTypes: PERSON_LOG_TYPES })) {
    if (event.position > head) break;
    visit(event);
    count++;
  }
  return count;
}

/**
 * Event time, the cut-off basis of time travel: the skew-corrected `timestamp` of a captured event,
 * `at` (when the command was decided) of a person management event.
 */
export function eventTimeOf(event: RecordedEvent): string {
  return event.type === 'EventCaptured'
    ? (event.data as EventCapturedData).timestamp
    : (event as unknown as PersonEvent).data.at;
}

export const projectOf = (event: RecordedEvent): number =>
  (event.data as { projectId: number }).projectId;
export const distinctIdOf = (event: RecordedEvent): string =>
  (event.data as { distinctId: string }).distinctId;
/** `$pageview` etc. for captured events, the fact's type for management events */
export const eventNameOf = (event: RecordedEvent): string =>
  event.type === 'EventCaptured' ? (event.data as EventCapturedData).event : event.type;

/**
 * The fold keeps bookkeeping for the projection's save step (dirty sets, warnings); a replay that
 * never saves drops it after each event so memory stays O(persons), not O(log).
 */
export function forgetBookkeeping(ws: WorkingSet): void {
  ws.dirtyPersons.clear();
  ws.deletedPersons.clear();
  ws.dirtyMappings.clear();
  ws.dirtyGroups.clear();
  ws.newGroupTypes.length = 0;
  ws.warnings.length = 0;
}
