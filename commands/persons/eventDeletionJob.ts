import type pg from 'pg';
import type { AppContext } from '../../src/appContext.ts';
import { uuidv5 } from '../../src/core/uuidv5.ts';
import type { EventStore, StreamAppend } from '../../src/eventStore/eventStore.ts';
import { chCheckpointId } from '../../src/processing/clickhouseProjection.ts';
import { readCheckpoint } from '../../src/processing/projection.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { eventsProjection } from '../../projections/events/eventsProjection.ts';
import { countWaitingDeletions, eventDeletionsProjection, pendingDeletions, type QueuedDeletion } from './eventDeletionQueue.ts';
import { type PersonEventsDeleted, personStream } from './personEvents.ts';

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
 * Runs the queue: for each batch of entries, one ClickHouse mutation removes the captured events
 * of their (project, distinct id) at or below the entry's log position, then PersonEventsDeleted
 * is appended per entry (ids derived from the entry, so a re-run after a crash appends nothing
 * twice). Only entries whose events the ClickHouse projection has all written are taken:
 * otherwise one of them could land after the DELETE. One run at a time across processes.
 */
export async function runEventDeletions(deps: EventDeletionDeps): Promise<EventDeletionRun> {
  const lock = await deps.pool.connect();
  try {
    const { rows } = await lock.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [LOCK]);
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
  const [next] = await deps.store.readAll({ after: checkpoint < 0n ? 'start' : checkpoint, maxCount: 1, filter: eventsProjection.filter });
  return next ? next.position - 1n : MAX_POSITION;
}

async function runLocked(deps: EventDeletionDeps): Promise<EventDeletionRun> {
  const reached = await clickHouseReach(deps);
  const done: string[] = [];
  for (;;) {
    const batch = await pendingDeletions(deps.pool, reached, deps.batchSize ?? 500, done);
    if (batch.length === 0) break;
    await deleteFromClickHouse(deps.clickhouse, batch);
    const position = await recordDeleted(deps, batch);
    await deps.awaitProjection?.(eventDeletionsProjection, position);
    done.push(...batch.map((b) => b.id));
  }
  return { ran: true, deleted: done.length, waiting: await countWaitingDeletions(deps.pool, reached) };
}

/** `ALTER TABLE … DELETE` rewrites the parts (the rows are gone from disk, not just hidden); `mutations_sync=2` waits for it. */
async function deleteFromClickHouse(ch: ClickHouse, batch: readonly QueuedDeletion[]): Promise<void> {
  const limits = new Map<string, bigint>();
  for (const entry of batch) {
    for (const d of entry.distinctIds) {
      const key = `${entry.projectId}:${d}`;
      const current = limits.get(key);
      if (current === undefined || entry.upToPosition > current) limits.set(key, entry.upToPosition);
    }
  }
  if (limits.size === 0) return;
  await ch.client.command({
    query: `ALTER TABLE ${ch.database}.events DELETE
             WHERE team_id IN {teams:Array(Int64)} AND distinct_id IN {ids:Array(String)}
               AND indexOf({keys:Array(String)}, concat(toString(team_id), ':', distinct_id)) > 0
               AND _offset <= toUInt64(arrayElement({limits:Array(String)}, indexOf({keys:Array(String)}, concat(toString(team_id), ':', distinct_id))))`,
    query_params: {
      teams: [...new Set(batch.map((b) => b.projectId))],
      ids: [...new Set(batch.flatMap((b) => b.distinctIds))],
      keys: [...limits.keys()],
      limits: [...limits.values()].map(String),
    },
    clickhouse_settings: { mutations_sync: '2' },
  });
}

async function recordDeleted(deps: EventDeletionDeps, batch: readonly QueuedDeletion[]): Promise<bigint> {
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
      events: [{ ...event, id: uuidv5(`${entry.id}:deleted`, NAMESPACE), metadata: { projectId: entry.projectId, correlationId: 'event-deletion-job', occurredAt: at } }],
      expectedRevision: 'any',
    };
  });
  const results = await deps.store.appendMany(appends);
  return results.reduce((max, r) => (r.position > max ? r.position : max), -1n);
}
