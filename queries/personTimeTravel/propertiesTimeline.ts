import type { EventCapturedData } from '../../commands/capture/model/eventCaptured.ts';
import {
  mappingKey,
  type PersonRow,
  type WorkingSet,
} from '../../projections/persons/personsFold.ts';
import type { Properties } from '../../projections/persons/personUpdates.ts';
import type { RecordedEvent } from '../../src/core/event.ts';
import { type IdentityOf, LiveFold, ownIdentity } from './logReplay.ts';
import { findPerson } from './personAsOf.ts';
import { type PersonRef, replayPersonSlice, type TimeTravelDeps } from './personSlice.ts';
import { drfTimestamp, isoformatUs, type TimelineParams } from './timelineParams.ts';

/**
 * GET persons/:id/properties_timeline/ (capture.md §3.10) from the log instead of ClickHouse's
 * persons-on-events column: the persons fold replays the log, and after each captured event the
 * properties of the person its distinct id maps to are that event's snapshot (what PostHog stores in
 * `person_properties` at ingestion; `{}` when the distinct id has no person, e.g. personless).
 *
 * The person's events are the events of the distinct ids the person has NOW (PostHog's person id
 * overrides after merges), in the date range and, when `events` is given, with those names; sorted
 * by timestamp ascending (ties in log order). A point starts at the first event and wherever the
 * tuple of crucial values differs from the previous event's (so returning to an earlier value starts
 * a new point); its properties are the snapshot of its first event, relevant_event_count the run length.
 */

export type TimelinePoint = {
  timestamp: string;
  properties: Properties;
  relevant_event_count: number;
};
export type PropertiesTimeline = {
  points: TimelinePoint[];
  crucial_property_keys: string[];
  effective_date_from: string;
  effective_date_to: string;
};

type Snapshot = {
  position: bigint;
  timestamp: string;
  timeMs: number;
  projectId: number;
  distinctId: string;
  properties: Properties;
};

export class TimelineFold {
  private readonly live: LiveFold;
  private readonly snapshots: Snapshot[] = [];

  constructor(
    private readonly projectId: number,
    private readonly params: TimelineParams,
    identityOf: IdentityOf = ownIdentity,
  ) {
    this.live = new LiveFold(identityOf);
  }

  get ws(): WorkingSet {
    return this.live.ws;
  }

  apply(event: RecordedEvent): void {
    this.live.apply(event);
    if (event.type !== 'EventCaptured') return;
    const d = event.data as EventCapturedData;
    if (d.projectId !== this.projectId) return;
    if (this.params.eventNames && !this.params.eventNames.includes(d.event)) return;
    const timeMs = Date.parse(d.timestamp);
    if (timeMs * 1000 < this.params.fromUs || timeMs * 1000 > this.params.toUs) return;
    const id = this.ws.mapping.get(mappingKey(d.projectId, d.distinctId));
    const person = id === null || id === undefined ? undefined : this.ws.persons.get(id);
    // Properties objects are replaced, never mutated, by the fold: keeping the reference is a snapshot.
    this.snapshots.push({
      position: event.position,
      timestamp: d.timestamp,
      timeMs,
      projectId: d.projectId,
      distinctId: d.distinctId,
      properties: person?.properties ?? {},
    });
  }

  /** The live person (null: nobody) and its timeline. */
  result(ref: PersonRef): { person: PersonRow; timeline: PropertiesTimeline } | null {
    const person = findPerson(this.ws, this.projectId, ref, this.live.identity);
    if (!person) return null;
    const ids = new Set(person.distinctIds);
    const events = this.snapshots
      .filter((s) => ids.has(s.distinctId))
      .sort(
        (a, b) =>
          a.timeMs - b.timeMs || (a.position < b.position ? -1 : a.position > b.position ? 1 : 0),
      );
    return {
      person,
      timeline: {
        points: pointsOf(events, this.params.crucialKeys),
        crucial_property_keys: this.params.crucialKeys,
        effective_date_from: isoformatUs(this.params.fromUs),
        effective_date_to: isoformatUs(this.params.toUs),
      },
    };
  }
}

/** Runs of equal crucial-value tuples, in the given (time) order. */
export function pointsOf(
  events: readonly { timestamp: string; properties: Properties }[],
  crucialKeys: readonly string[],
): TimelinePoint[] {
  const points: TimelinePoint[] = [];
  let previous: string | undefined;
  for (const e of events) {
    const tuple = JSON.stringify(crucialKeys.map((k) => e.properties[k] ?? null));
    if (points.length === 0 || tuple !== previous) {
      points.push({
        timestamp: drfTimestamp(e.timestamp),
        properties: { ...e.properties },
        relevant_event_count: 1,
      });
    } else {
      points[points.length - 1]!.relevant_event_count++;
    }
    previous = tuple;
  }
  return points;
}

/** The live person's timeline, from its part of the log (null: nobody has that id or uuid now). */
export async function propertiesTimeline(
  deps: TimeTravelDeps,
  projectId: number,
  ref: PersonRef,
  params: TimelineParams,
): Promise<PropertiesTimeline | null> {
  const fold = await replayPersonSlice(
    deps,
    projectId,
    ref,
    (identityOf) => new TimelineFold(projectId, params, identityOf),
  );
  return fold?.result(ref)?.timeline ?? null;
}
