import type pg from 'pg';
import {
  type PersonEventsDeleted,
  personStream,
} from '../../commands/persons/model/personEvents.ts';
import { eventDeletionsProjection } from '../../projections/eventDeletions/eventDeletionsProjection.ts';
import {
  eventDeletionsReader,
  type QueuedDeletion,
} from '../../projections/eventDeletions/eventDeletionsReader.ts';
import { deletePersonEvents } from '../../projections/events/deletePersonEvents.ts';
import { eventsProjection } from '../../projections/events/eventsProjection.ts';
import type { AppContext } from '../../src/appContext.ts';
import { uuidv5 } from '../../src/core/uuidv5.ts';
import type { EventStore, StreamAppend } from '../../src/eventStore/eventStore.ts';
import { chCheckpointId } from '../../src/processing/clickhouseProjection.ts';
import { readCheckpoint } from '../../src/processing/projection.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';

export type EventDeletionDeps = Readonly<{
  store: EventStore;
  pool: pg.Pool;
  clickhouse: ClickHouse;
  /** when given, the run returns only once the queue read model shows what it did */
  awaitProjection?: AppContext['awaitProjection'];
  now?: () => Date;
  /** queue entries per ClickHouse mutation */
  batchSize?: number;
}>;

export type EventDeletionRun = Readonly<{
  /** false when another process holds the job's lock: nothing was done */
  ran: boolean;
  /** queue entries completed */
  deleted: number;
  /** entries left queued because ClickHouse has not yet written all of their events */
  waiting: number;
}>;

const LOCK = 'hogstream-event-deletions';
const NAMESPACE = '6f1c7a52-3c1e-4d8e-9a57-5d0c1b3e2a10';

/**
 * A process manager, not a command handler: no request asks for it; on a schedule it reads the
 * queue read model, acts on ClickHouse and records the outcome as events. For each batch of
 * entries, one ClickHouse mutation removes the captured events of their (project, distinct id) at
 * or below the entry's log position, then PersonEventsDeleted is appended per entry (ids derived
 * from the entry, so a re-run after a crash appends nothing twice). Only entries whose events the ClickHouse projection has all written are taken:
 * otherwise one of them could land after the DELETE. One run at a time across processes.
 */
export async function runEventDeletions(deps: EventDeletionDeps): Promise<EventDeletionRun> {
  const lock = await deps.pool.connect();
  try {
    const { rows } = await lock.query<{ ok: boolean }>(
      'SELECT pg_try_advisory_lock(hashtext($1)) AS ok',
      [LOCK],
    );
    if (!rows[0]!.ok) return { ran: false, deleted: 0, waiting: 0 };
    try {
      return await runLocked(deps);
    } finally {
      await lock.query('SELECT pg_advisory_unlock(hashtext($1))', [LOCK]);
    }
  } finally {
    lock.release();
  }
}

const MAX_POSITION = (1n << 63n) - 1n;

/**
 * The highest log position below which ClickHouse holds every captured event: just under the
 * first EventCaptured the events projection has not written yet, or everything when it has
 * written them all (its checkpoint only moves on captured events).
 */
async function clickHouseReach(deps: EventDeletionDeps): Promise<bigint> {
  const checkpoint = await readCheckpoint(deps.pool, chCheckpointId(eventsProjection));
  const [next] = await deps.store.readAll({
    after: checkpoint < 0n ? 'start' : checkpoint,
    maxCount: 1,
    filter: eventsProjection.filter,
  });
  return next ? next.position - 1n : MAX_POSITION;
}

async function runLocked(deps: EventDeletionDeps): Promise<EventDeletionRun> {
  const queue = eventDeletionsReader(deps.pool);
  const reached = await clickHouseReach(deps);
  const done: string[] = [];
  for (;;) {
    const batch = await queue.pendingDeletions(reached, deps.batchSize ?? 500, done);
    if (batch.length === 0) break;
    await deletePersonEvents(deps.clickhouse, batch);
    const position = await recordDeleted(deps, batch);
    await deps.awaitProjection?.(eventDeletionsProjection, position);
    done.push(...batch.map((b) => b.id));
  }
  return { ran: true, deleted: done.length, waiting: await queue.countWaitingDeletions(reached) };
}

async function recordDeleted(
  deps: EventDeletionDeps,
  batch: readonly QueuedDeletion[],
): Promise<bigint> {
  const at = (deps.now ?? (() => new Date()))().toISOString();
  const appends: StreamAppend[] = batch.map((entry) => {
    const event: PersonEventsDeleted = {
      type: 'PersonEventsDeleted',
      data: {
        projectId: entry.projectId,
        personUuid: entry.personUuid,
        distinctIds: entry.distinctIds,
        queuedEventId: entry.id,
        upToPosition: entry.upToPosition.toString(),
        at,
      },
    };
    return {
      streamName: personStream(entry.projectId, entry.personUuid),
      events: [
        {
          ...event,
          id: uuidv5(`${entry.id}:deleted`, NAMESPACE),
          metadata: {
            projectId: entry.projectId,
            correlationId: 'event-deletion-job',
            occurredAt: at,
          },
        },
      ],
      expectedRevision: 'any',
    };
  });
  const results = await deps.store.appendMany(appends);
  return results.reduce((max, r) => (r.position > max ? r.position : max), -1n);
}
