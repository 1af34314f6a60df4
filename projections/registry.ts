import type pg from 'pg';
import { type ChProjection, chCheckpointId } from '../src/processing/clickhouseProjection.ts';
import { checkpointId, type EventFilter, type PgProjection } from '../src/processing/projection.ts';
import { accessProjection } from './access/accessProjection.ts';
import { actionsProjection } from './actions/actionsProjection.ts';
import { personDistinctIdProjection } from './analytics/personDistinctIdProjection.ts';
import { annotationsProjection } from './annotations/annotationsProjection.ts';
import { cohortsProjection } from './cohorts/cohortsProjection.ts';
import { dashboardsProjection } from './dashboards/dashboardsProjection.ts';
import { eventDeletionsProjection } from './eventDeletions/eventDeletionsProjection.ts';
import { deletedEventsLookup } from './eventDeletions/eventDeletionsReader.ts';
import { eventsFromLogChunk } from './events/eventsFromLog.ts';
import {
  eventsProjection,
  skippingDeletedEvents,
  withGroupIndexes,
} from './events/eventsProjection.ts';
import { featureFlagsProjection } from './featureFlags/featureFlagsProjection.ts';
import { hashKeyOverridesProjection } from './featureFlags/hashKeyOverridesProjection.ts';
import { ingestionWarningsProjection } from './ingestionWarnings/ingestionWarningsProjection.ts';
import { insightsProjection } from './insights/insightsProjection.ts';
import { groupTypesLookup } from './persons/groupTypesLookup.ts';
import { personMappingLookup } from './persons/personMappingLookup.ts';
import { personsProjection } from './persons/personsProjection.ts';
import { personsProjectionFor } from './persons/personsWorkers.ts';

/** The one list the server, the CLI's rebuild and the migrations use. */
export const pgProjections: readonly PgProjection[] = [
  accessProjection,
  featureFlagsProjection,
  cohortsProjection,
  dashboardsProjection,
  hashKeyOverridesProjection,
  ingestionWarningsProjection,
  personsProjection,
  eventDeletionsProjection,
  annotationsProjection,
  actionsProjection,
  insightsProjection,
];
/** The list with the persons read model as `INGESTION_WORKERS` builds it (the same list for 1). */
export const pgProjectionsFor = (ingestionWorkers: number): readonly PgProjection[] =>
  ingestionWorkers <= 1
    ? pgProjections
    : pgProjections.map((p) =>
        p === personsProjection ? personsProjectionFor(ingestionWorkers) : p,
      );
export const chProjections: readonly ChProjection[] = [eventsProjection];
/**
 * What the server runs: the events projection leaves out events deleted with their person and
 * adds `$group_N` from the group types the persons projection assigned (both read from Postgres);
 * `person_distinct_id` follows the persons projection's merges (analytics count persons with it).
 */
export const chProjectionsFor = (pool: pg.Pool): readonly ChProjection[] => {
  const groupTypes = groupTypesLookup(pool);
  const deleted = deletedEventsLookup(pool);
  return [
    ...chProjections.map((p) =>
      p === eventsProjection
        ? {
            ...skippingDeletedEvents(withGroupIndexes(eventsProjection, groupTypes), deleted),
            fromLogChunk: eventsFromLogChunk(groupTypes, deleted),
          }
        : p,
    ),
    personDistinctIdProjection(personMappingLookup(pool)),
  ];
};

/** A read model as its runner is named and its checkpoint kept: what `status` and readiness read. */
export type ReadModelEntry = Readonly<{ name: string; checkpointId: string; filter: EventFilter }>;

/** Every Postgres read model, then the given ClickHouse ones. */
export const readModelEntries = (ch: readonly ChProjection[]): ReadModelEntry[] => [
  ...pgProjections.map((p) => ({ name: p.name, checkpointId: checkpointId(p), filter: p.filter })),
  ...ch.map((p) => ({
    name: `clickhouse:${p.name}`,
    checkpointId: chCheckpointId(p),
    filter: p.filter,
  })),
];
