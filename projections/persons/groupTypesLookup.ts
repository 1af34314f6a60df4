import type pg from 'pg';
import { ReadModelBehind } from '../../src/processing/poisonEvents.ts';
import { checkpointId, readCheckpoint } from '../../src/processing/projection.ts';
import type { GroupTypesLookup } from '../events/eventsProjection.ts';
import { personsProjection } from './personsProjection.ts';
import { personsReader } from './personsReader.ts';

/**
 * Group type indexes from the persons read model, once the persons projection has applied the
 * log up to `upToPosition` (so a type first seen in this batch already has its index). While it
 * is behind, this throws and the events runner retries the batch with backoff.
 */
export const groupTypesLookup =
  (pool: pg.Pool): GroupTypesLookup =>
  async (projectIds, upToPosition) => {
    for (let attempt = 0; ; attempt++) {
      if ((await readCheckpoint(pool, checkpointId(personsProjection))) >= upToPosition) break;
      if (attempt >= 100)
        throw new ReadModelBehind('waiting for the persons projection to assign group types');
      await new Promise((r) => setTimeout(r, 20));
    }
    return personsReader(pool).groupTypeIndexes(projectIds);
  };
