import type pg from 'pg';
import { ReadModelBehind } from '../../src/processing/poisonEvents.ts';
import { checkpointId, readCheckpoint } from '../../src/processing/projection.ts';
import { analyticsPersonsReader, type DistinctIdOwner } from './analyticsPersonsReader.ts';
import { personsProjection } from './personsProjection.ts';

/**
 * `projectId` → distinct ids: every distinct id of the persons that hold any of them now, and
 * the asked ones no person holds. Waits until the persons projection has applied the log up to
 * `upToPosition` (throws while it is behind; the ClickHouse runner retries the batch).
 */
export type PersonMappingLookup = (
  wanted: ReadonlyMap<number, ReadonlySet<string>>,
  upToPosition: bigint,
) => Promise<Map<number, DistinctIdOwner[]>>;

export const personMappingLookup =
  (pool: pg.Pool): PersonMappingLookup =>
  async (wanted, upToPosition) => {
    for (let attempt = 0; ; attempt++) {
      if ((await readCheckpoint(pool, checkpointId(personsProjection))) >= upToPosition) break;
      if (attempt >= 100)
        throw new ReadModelBehind('waiting for the persons projection to merge persons');
      await new Promise((r) => setTimeout(r, 20));
    }
    const reader = analyticsPersonsReader(pool);
    const out = new Map<number, DistinctIdOwner[]>();
    for (const [projectId, ids] of wanted)
      out.set(projectId, await reader.distinctIdOwners(projectId, [...ids]));
    return out;
  };
