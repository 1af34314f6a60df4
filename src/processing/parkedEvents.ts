import type pg from 'pg';
import type { RecordedEvent } from '../core/event.ts';
import type { Queryable } from '../db/postgres.ts';

/**
 * Events a read model could not apply (a value its store refuses, a bug, a constraint), set aside
 * so the read model goes on with the next one: EventStoreDB's parked messages, Kafka's dead-letter
 * topic. One row per read model and log position; the event itself stays in the log, so a parked
 * event is replayed or dropped later (`npm run cli -- parked …`) and a rebuild parks it again if
 * it still fails. `read_model` is the runner's name (`persons`, `clickhouse:events`).
 */
export const parkedEventsSchema = `
CREATE TABLE IF NOT EXISTS parked_events (
  read_model  text NOT NULL,
  position    bigint NOT NULL,
  stream      text NOT NULL,
  event_type  text NOT NULL,
  event_id    text NOT NULL,
  error       text NOT NULL,
  attempts    integer NOT NULL,
  parked_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (read_model, position)
);`;

export type ParkedEvent = Readonly<{
  readModel: string;
  position: bigint;
  stream: string;
  eventType: string;
  eventId: string;
  error: string;
  attempts: number;
  parkedAt: Date;
}>;

/** An error message as stored: bounded, so a huge failing value does not come back in every listing. */
const MAX_ERROR_LENGTH = 2_000;

export const errorText = (error: unknown): string => {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}…` : text;
};

/**
 * Records `event` as parked for `readModel`, in the caller's transaction. Unqualified: a rebuild
 * whose search_path starts with its shadow schema parks into that schema's table, swapped in with
 * the read model's tables.
 */
export async function recordParked(
  tx: Queryable,
  readModel: string,
  event: RecordedEvent,
  error: unknown,
  attempts: number,
): Promise<void> {
  await tx.query(
    `INSERT INTO parked_events (read_model, position, stream, event_type, event_id, error, attempts)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (read_model, position)
       DO UPDATE SET error = EXCLUDED.error, attempts = EXCLUDED.attempts, parked_at = now()`,
    [
      readModel,
      event.position.toString(),
      event.streamName,
      event.type,
      event.id,
      errorText(error),
      attempts,
    ],
  );
}

type ParkedRow = {
  read_model: string;
  position: string;
  stream: string;
  event_type: string;
  event_id: string;
  error: string;
  attempts: number;
  parked_at: Date;
};

const fromRow = (r: ParkedRow): ParkedEvent => ({
  readModel: r.read_model,
  position: BigInt(r.position),
  stream: r.stream,
  eventType: r.event_type,
  eventId: r.event_id,
  error: r.error,
  attempts: r.attempts,
  parkedAt: r.parked_at,
});

/** The parked events reader (public schema): listings, counts, and what replay and drop act on. */
export function parkedEventsReader(pool: pg.Pool) {
  return {
    /** oldest first, at most `limit`; of one read model, or of all */
    async list(options: { readModel?: string; limit?: number } = {}): Promise<ParkedEvent[]> {
      const { rows } = await pool.query<ParkedRow>(
        `SELECT * FROM public.parked_events
          WHERE $1::text IS NULL OR read_model = $1
          ORDER BY read_model, position LIMIT $2`,
        [options.readModel ?? null, options.limit ?? 1_000],
      );
      return rows.map(fromRow);
    },
    /** parked events per read model (read models with none are absent) */
    async counts(): Promise<Map<string, number>> {
      const { rows } = await pool.query<{ read_model: string; n: string }>(
        'SELECT read_model, count(*) AS n FROM public.parked_events GROUP BY read_model',
      );
      return new Map(rows.map((r) => [r.read_model, Number(r.n)]));
    },
  };
}

/** Forgets parked events: after a replay applied them, or when the operator drops them. */
export async function deleteParked(
  tx: Queryable,
  readModel: string,
  positions: readonly bigint[],
): Promise<number> {
  const { rowCount } = await tx.query(
    'DELETE FROM public.parked_events WHERE read_model = $1 AND position = ANY($2::bigint[])',
    [readModel, positions.map(String)],
  );
  return rowCount ?? 0;
}
