import type pg from 'pg';

/**
 * The only reader of the `event_deletions` read model's tables (`event_deletion_queue`,
 * `deleted_person_events`): the deletion process reads its to-do list here, and the ClickHouse
 * events projection the deletions it must keep out of a replay.
 */
export type EventDeletionsReader = ReturnType<typeof eventDeletionsReader>;

/** `${projectId}|${distinctId}` → the highest log position up to which its events were deleted. */
export type DeletedEvents = ReadonlyMap<string, bigint>;
export const deletedEventsKey = (projectId: number, distinctId: string) =>
  `${projectId}|${distinctId}`;

export type QueuedDeletion = {
  id: string;
  projectId: number;
  personUuid: string;
  distinctIds: string[];
  upToPosition: bigint;
};

export const eventDeletionsReader = (pool: pg.Pool) => ({
  /**
   * Deletions that reach `fromPosition` or later: the only ones that can hide an event of a batch
   * starting there. Live batches come after every deletion, so this is usually an empty index scan.
   */
  async deletedSince(fromPosition: bigint): Promise<DeletedEvents> {
    const { rows } = await pool.query<{ project_id: number; distinct_id: string; up_to: string }>(
      `SELECT project_id, distinct_id, max(up_to_position) AS up_to FROM deleted_person_events
        WHERE up_to_position >= $1 GROUP BY project_id, distinct_id`,
      [fromPosition.toString()],
    );
    return new Map(
      rows.map((r) => [deletedEventsKey(r.project_id, r.distinct_id), BigInt(r.up_to)]),
    );
  },

  /** Pending entries whose events the ClickHouse projection has already written (up to `reached`), oldest first. */
  async pendingDeletions(
    reached: bigint,
    limit: number,
    skip: readonly string[],
  ): Promise<QueuedDeletion[]> {
    const { rows } = await pool.query<{
      id: string;
      project_id: number;
      person_uuid: string;
      distinct_ids: string[];
      up_to_position: string;
    }>(
      `SELECT id, project_id, person_uuid::text AS person_uuid, distinct_ids, up_to_position FROM event_deletion_queue
        WHERE deleted_at IS NULL AND up_to_position <= $1 AND NOT (id = ANY($2::uuid[]))
        ORDER BY up_to_position LIMIT $3`,
      [reached.toString(), skip, limit],
    );
    return rows.map((r) => ({
      id: r.id,
      projectId: r.project_id,
      personUuid: r.person_uuid,
      distinctIds: r.distinct_ids,
      upToPosition: BigInt(r.up_to_position),
    }));
  },

  /** Pending entries ClickHouse has not written every event of yet (above `reached`). */
  async countWaitingDeletions(reached: bigint): Promise<number> {
    const { rows } = await pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM event_deletion_queue WHERE deleted_at IS NULL AND up_to_position > $1',
      [reached.toString()],
    );
    return Number(rows[0]!.n);
  },
});

/** The events projection's view of completed deletions (`skippingDeletedEvents`), read once per batch. */
export const deletedEventsLookup =
  (pool: pg.Pool) =>
  (fromPosition: bigint): Promise<DeletedEvents> =>
    eventDeletionsReader(pool).deletedSince(fromPosition);
