import type pg from 'pg';
import type { RebuildProgress } from './rebuildProjection.ts';

/**
 * Rebuilds the CLI hands to a running server. Embedded chDB lives inside the server's process, so
 * a second process cannot open it; the CLI writes a request into Postgres (which both reach), the
 * server claims it, runs it beside its live read models and writes its progress back, and the CLI
 * shows that progress until the request is finished.
 */
export const rebuildRequestsSchema = `
CREATE TABLE IF NOT EXISTS rebuild_requests (
  id           bigserial PRIMARY KEY,
  target       text NOT NULL,
  requested_at timestamptz NOT NULL DEFAULT now(),
  started_at   timestamptz,
  updated_at   timestamptz,
  finished_at  timestamptz,
  name         text,
  position     bigint,
  head         bigint,
  result       jsonb,
  error        text
);
-- where each read model of the request is, {"<name>": {"position": "…", "head": "…"}}: a request
-- rebuilds several side by side (name, position and head above were one model's, before)
ALTER TABLE rebuild_requests ADD COLUMN IF NOT EXISTS progress jsonb;`;

export type RebuiltModel = {
  name: string;
  position: string;
  /** events a Postgres read model folded */
  events?: number;
  /** events whose rows ClickHouse built from the log in SQL, and those Node replayed */
  replayed?: { inClickHouse: number; inNode: number };
};

export type RebuildWaitOptions = Readonly<{
  onProgress?: (p: RebuildProgress) => void;
  /** a request no server has claimed by then fails (no server, or one too old to serve it) */
  claimTimeoutMs?: number;
  /** a claimed request whose progress has not moved for this long fails (the server died) */
  stallTimeoutMs?: number;
  pollMs?: number;
}>;

/** Asks the running server for a rebuild and waits for it, reporting its progress. */
export async function rebuildThroughServer(
  pool: pg.Pool,
  target: string,
  options: RebuildWaitOptions = {},
): Promise<RebuiltModel[]> {
  const { rows } = await pool.query<{ id: string }>(
    'INSERT INTO rebuild_requests (target) VALUES ($1) RETURNING id',
    [target],
  );
  const id = rows[0]!.id;
  const asked = Date.now();
  let lastMove = Date.now();
  let lastProgress: string | null = null;
  for (;;) {
    await new Promise((r) => setTimeout(r, options.pollMs ?? 250));
    const { rows: now } = await pool.query<{
      started_at: Date | null;
      finished_at: Date | null;
      progress: Record<string, { position: string; head: string }> | null;
      result: RebuiltModel[] | null;
      error: string | null;
    }>('SELECT * FROM rebuild_requests WHERE id = $1', [id]);
    const r = now[0]!;
    if (r.error) throw new Error(r.error);
    const report = () => {
      for (const [name, p] of Object.entries(r.progress ?? {}))
        options.onProgress?.({
          name,
          position: BigInt(p.position),
          head: BigInt(p.head),
          events: 0,
        });
    };
    const moved = JSON.stringify(r.progress);
    if (r.finished_at) {
      report();
      return r.result ?? [];
    }
    if (!r.started_at) {
      if (Date.now() - asked > (options.claimTimeoutMs ?? 15_000)) {
        await pool.query('DELETE FROM rebuild_requests WHERE id = $1 AND started_at IS NULL', [id]);
        throw new Error('the running server did not take the rebuild request (is it up to date?)');
      }
      continue;
    }
    if (moved !== lastProgress) {
      lastProgress = moved;
      lastMove = Date.now();
    } else if (Date.now() - lastMove > (options.stallTimeoutMs ?? 120_000))
      throw new Error('the running server stopped reporting progress of the rebuild');
    report();
  }
}

/**
 * The server side: claims requests one at a time (`SKIP LOCKED`, so two servers on one database
 * never both take one) and runs them. Returns a stop function.
 */
export function serveRebuildRequests(deps: {
  pool: pg.Pool;
  run: (target: string, onProgress: (p: RebuildProgress) => void) => Promise<RebuiltModel[]>;
  onError?: (error: unknown) => void;
  pollMs?: number;
}): () => Promise<void> {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const tick = async () => {
    const { rows } = await deps.pool.query<{ id: string; target: string }>(
      `UPDATE rebuild_requests SET started_at = now(), updated_at = now()
        WHERE id = (SELECT id FROM rebuild_requests WHERE started_at IS NULL ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING id, target`,
    );
    const request = rows[0];
    if (!request) return;
    let written = 0;
    const progress: Record<string, { position: string; head: string }> = {};
    const onProgress = (p: RebuildProgress) => {
      progress[p.name] = { position: p.position.toString(), head: p.head.toString() };
      // at most a few writes a second, whatever the rebuilds report
      if (Date.now() - written < 250 && p.position < p.head) return;
      written = Date.now();
      void deps.pool
        .query('UPDATE rebuild_requests SET progress = $2, updated_at = now() WHERE id = $1', [
          request.id,
          JSON.stringify(progress),
        ])
        .catch(() => undefined);
    };
    try {
      const result = await deps.run(request.target, onProgress);
      await deps.pool.query(
        'UPDATE rebuild_requests SET finished_at = now(), result = $2, progress = $3 WHERE id = $1',
        [request.id, JSON.stringify(result), JSON.stringify(progress)],
      );
    } catch (error) {
      deps.onError?.(error);
      await deps.pool.query('UPDATE rebuild_requests SET error = $2 WHERE id = $1', [
        request.id,
        error instanceof Error ? error.message : String(error),
      ]);
    }
  };
  let busy = false;
  const timer = setInterval(() => {
    if (stopped || busy) return;
    busy = true;
    running = tick()
      .catch(deps.onError)
      .finally(() => {
        busy = false;
      });
  }, deps.pollMs ?? 1_000);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
