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
);`;

export type RebuiltModel = {
  name: string;
  position: string;
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
  let lastPosition: string | null = null;
  for (;;) {
    await new Promise((r) => setTimeout(r, options.pollMs ?? 250));
    const r = await pool
      .query<{
        started_at: Date | null;
        finished_at: Date | null;
        name: string | null;
        position: string | null;
        head: string | null;
        result: RebuiltModel[] | null;
        error: string | null;
      }>('SELECT * FROM rebuild_requests WHERE id = $1', [id])
      .then(({ rows }) => rows[0]!)
      // A poll that cannot get a connection in time (a new session on a machine the rebuild keeps
      // busy took more than PG_CONNECT_TIMEOUT_MS in bench/rebuild) is only a missed look: the
      // stall timeout still ends a wait on a server that died.
      .catch((error: unknown) => {
        if (Date.now() - lastMove > (options.stallTimeoutMs ?? 120_000)) throw error;
        return undefined;
      });
    if (!r) continue;
    if (r.error) throw new Error(r.error);
    const report = () =>
      r.name &&
      r.position !== null &&
      r.head !== null &&
      options.onProgress?.({
        name: r.name,
        position: BigInt(r.position),
        head: BigInt(r.head),
        events: 0,
      });
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
    if (r.position !== lastPosition) {
      lastPosition = r.position;
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
    let last: RebuildProgress | undefined;
    const onProgress = (p: RebuildProgress) => {
      last = p;
      // at most a few writes a second, whatever the rebuild reports
      if (Date.now() - written < 250 && p.position < p.head) return;
      written = Date.now();
      void deps.pool
        .query(
          'UPDATE rebuild_requests SET name = $2, position = $3, head = $4, updated_at = now() WHERE id = $1',
          [request.id, p.name, p.position.toString(), p.head.toString()],
        )
        .catch(() => undefined);
    };
    try {
      const result = await deps.run(request.target, onProgress);
      await deps.pool.query(
        `UPDATE rebuild_requests SET finished_at = now(), result = $2, name = $3, position = $4, head = $5
          WHERE id = $1`,
        [
          request.id,
          JSON.stringify(result),
          last?.name ?? null,
          last?.position.toString() ?? null,
          last?.head.toString() ?? null,
        ],
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
