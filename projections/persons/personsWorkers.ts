import type pg from 'pg';
import type { Event } from '../../src/core/event.ts';
import { type PgProjection, pgProjection } from '../../src/processing/projection.ts';
import {
  applyToWorkingSet,
  emptyWorkingSet,
  type PersonsFoldEvent,
  type WorkingSet,
} from './personsFold.ts';
import {
  builtWith,
  counterRows,
  type PartitionCounter,
  partitionOfEvent,
  storedCounter,
  workersMismatch,
} from './personsPartitions.ts';
import { loadWorkingSet, personsProjection } from './personsProjection.ts';
import { save, writesOf } from './personsSave.ts';

/**
 * Folds events in log order, each drawing person ids and order stamps from its own partition's
 * sequence (`drawn`, started from `stored`): what worker i's ids are does not depend on what the
 * other workers did, so a rebuild with the same count draws the same ones.
 */
function foldInPartitions(
  ws: WorkingSet,
  events: readonly Event[],
  drawn: Map<number, PartitionCounter>,
  stored: ReadonlyMap<string, number>,
  workers: number,
): void {
  for (const event of events) {
    const partition = partitionOfEvent(event, workers);
    let counter = drawn.get(partition);
    if (!counter) {
      counter = storedCounter(stored, partition, workers);
      drawn.set(partition, counter);
    }
    ws.nextPersonId = counter.personId;
    ws.nextOrd = counter.ord;
    applyToWorkingSet(ws, event as Parameters<typeof applyToWorkingSet>[1]);
    counter.personId = ws.nextPersonId;
    counter.ord = ws.nextOrd;
  }
}

/** Which count built the tables (see `assertBuiltWith`); never updated, so workers never wait on it. */
const recordWorkers = (tx: pg.PoolClient, workers: number) =>
  tx.query(`INSERT INTO persons_counters VALUES ('workers', $1) ON CONFLICT (name) DO NOTHING`, [
    workers,
  ]);

/**
 * The persons read model as `INGESTION_WORKERS` builds it (docs/SCALING.md). One worker: the
 * projection as it has always been. Several: `partitions` holds one runner's projection per
 * partition — the events of its distinct ids, checkpoint `persons#<i>@<version>` — and the whole
 * (checkpoint `persons@<version>`, which the runners keep at the lowest of theirs) is what a
 * rebuild and a replay of parked events fold, every event in its own partition's sequence.
 */
export function personsProjectionFor(workers: number): PgProjection<PersonsFoldEvent> {
  if (workers <= 1) return personsProjection;
  const handle = async (events: readonly Event[], tx: pg.PoolClient) => {
    const { ws, counters } = await loadWorkingSet(tx, events as never, undefined, workers);
    const drawn = new Map<number, PartitionCounter>();
    foldInPartitions(ws, events, drawn, counters, workers);
    // no generation: several writers keep no cache (personsCache.ts mirrors one writer's saves)
    await save(tx, ws, null, counterRows(drawn, workers));
    await recordWorkers(tx, workers);
  };
  const { bulkFold: _single, ...rest } = personsProjection;
  const whole = pgProjection<PersonsFoldEvent>({
    ...rest,
    handle,
    bulkFold() {
      const ws = emptyWorkingSet(1, 1, workers);
      const drawn = new Map<number, PartitionCounter>();
      const writes = () => [
        ...writesOf(ws, null, counterRows(drawn, workers)),
        (tx: pg.PoolClient) => recordWorkers(tx, workers),
      ];
      return {
        apply: (events) => foldInPartitions(ws, events, drawn, new Map(), workers),
        size: () => ws.persons.size + ws.mapping.size + ws.groups.size,
        save: async (tx, concurrently) => {
          if (concurrently) return concurrently(writes());
          for (const write of writes()) await write(tx);
        },
      };
    },
  });
  const partitions = Array.from({ length: workers }, (_, i) =>
    pgProjection<PersonsFoldEvent>({
      ...rest,
      checkpoint: `${rest.name}#${i}@${rest.version}`,
      handle: async (events, tx) => {
        const mine = events.filter((e) => partitionOfEvent(e, workers) === i);
        if (mine.length > 0) await handle(mine, tx);
      },
    }),
  );
  return { ...whole, partitions };
}

/**
 * At start: the persons tables must have been built with this many workers (`assertBuiltWith`);
 * with another count the server refuses to start instead of folding into them.
 */
export async function checkIngestionWorkers(db: pg.Pool, workers: number): Promise<void> {
  const { rows } = await db.query<{ name: string; value: string }>(
    'SELECT name, value::text AS value FROM persons_counters',
  );
  const built = builtWith(new Map(rows.map((r) => [r.name, Number(r.value)])));
  if (built !== undefined && built !== workers)
    throw new IngestionWorkersMismatch(workersMismatch(built, workers));
}
export class IngestionWorkersMismatch extends Error {}
