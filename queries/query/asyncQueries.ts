import { DomainFailure, throttled } from '../../src/core/errors.ts';

/**
 * `/query`'s asynchronous queries, in memory on the read side (a query result is not a fact:
 * nothing goes to the event log). PostHog keeps a query's status in Redis for its Celery worker;
 * here the query runs in this process and its status lives here, so a status is answered only by
 * the server that took the query. Bounded per project: at most `maxRunning` queries running (one
 * more is refused with 429), at most `maxKept` finished results, each for `keepMinutes`; past
 * `maxKept`, the oldest finished result is dropped.
 */
export type AsyncQueryLimits = Readonly<{
  maxRunning: number;
  keepMinutes: number;
  maxKept: number;
}>;

/** PostHog's QueryStatus (posthog/schema.py), the fields it fills for a query run in the background. */
export type QueryStatus = {
  id: string;
  team_id: number;
  query_async: true;
  complete: boolean;
  error: boolean;
  error_message: string | null;
  results: unknown;
  start_time: string;
  pickup_time: string;
  end_time: string | null;
  expiration_time: string | null;
  task_id: string | null;
  query_progress: null;
  labels: null;
  dashboard_id: null;
  insight_id: null;
};

type Entry = { status: QueryStatus; abort: AbortController; finishedAt?: number };

/** What a failed query's status says: the user's problem in words, or that the server failed. */
export type DescribeFailure = (error: unknown) => string;

const describeDefault: DescribeFailure = (error) =>
  error instanceof DomainFailure ? error.error.detail : 'The query failed on the server.';

export class AsyncQueries {
  private readonly entries = new Map<string, Entry>();
  /** running ClickHouse work per project, until it settles (a cancelled query counts until it stops) */
  private readonly running = new Map<number, number>();

  constructor(
    private readonly limits: AsyncQueryLimits,
    private readonly now: () => Date = () => new Date(),
    private readonly describe: DescribeFailure = describeDefault,
  ) {}

  private key = (projectId: number, id: string) => `${projectId}:${id}`;

  /** Starts `run` in the background; 429 when the project already runs `maxRunning` queries. */
  start(
    projectId: number,
    id: string,
    run: (signal: AbortSignal) => Promise<unknown>,
  ): QueryStatus {
    this.sweep();
    const key = this.key(projectId, id);
    if (this.entries.get(key)?.status.complete === false)
      throw new DomainFailure(
        throttled(
          `A query with the id ${id} is already running; poll it or use another client_query_id.`,
        ),
      );
    const busy = this.running.get(projectId) ?? 0;
    if (busy >= this.limits.maxRunning)
      throw new DomainFailure(
        throttled(
          `This project already runs ${busy} asynchronous queries (at most ${this.limits.maxRunning}); wait for one to finish or cancel one.`,
        ),
      );
    const at = this.now().toISOString();
    const entry: Entry = {
      abort: new AbortController(),
      status: {
        id,
        team_id: projectId,
        query_async: true,
        complete: false,
        error: false,
        error_message: null,
        results: null,
        start_time: at,
        pickup_time: at,
        end_time: null,
        expiration_time: null,
        task_id: null,
        query_progress: null,
        labels: null,
        dashboard_id: null,
        insight_id: null,
      },
    };
    this.entries.set(key, entry);
    this.running.set(projectId, busy + 1);
    const settle = (patch: Partial<QueryStatus>) => {
      this.running.set(projectId, (this.running.get(projectId) ?? 1) - 1);
      if (this.entries.get(key) !== entry) return; // cancelled meanwhile
      const end = this.now();
      entry.finishedAt = end.getTime();
      Object.assign(entry.status, patch, {
        complete: true,
        end_time: end.toISOString(),
        expiration_time: new Date(end.getTime() + this.limits.keepMinutes * 60_000).toISOString(),
      });
      this.evictOverflow(projectId);
    };
    // deferred, so the caller answers 202 before the query starts working
    setImmediate(() => {
      run(entry.abort.signal).then(
        (results) => settle({ results }),
        (error: unknown) => settle({ error: true, error_message: this.describe(error) }),
      );
    });
    return { ...entry.status };
  }

  /** The query's status, or undefined when unknown, expired, dropped or cancelled. */
  status(projectId: number, id: string): QueryStatus | undefined {
    this.sweep();
    const entry = this.entries.get(this.key(projectId, id));
    return entry ? { ...entry.status } : undefined;
  }

  /** Cancels (aborts the ClickHouse query) and forgets it; false when there was nothing to cancel. */
  cancel(projectId: number, id: string): boolean {
    const key = this.key(projectId, id);
    const entry = this.entries.get(key);
    if (!entry) return false;
    this.entries.delete(key);
    entry.abort.abort(new Error('query cancelled'));
    return true;
  }

  /** Aborts every running query (server shutdown). */
  close(): void {
    for (const entry of this.entries.values()) entry.abort.abort(new Error('server closing'));
    this.entries.clear();
  }

  private sweep(): void {
    const cutoff = this.now().getTime() - this.limits.keepMinutes * 60_000;
    for (const [key, entry] of this.entries)
      if (entry.finishedAt !== undefined && entry.finishedAt <= cutoff) this.entries.delete(key);
  }

  private evictOverflow(projectId: number): void {
    const finished = [...this.entries]
      .filter(([, e]) => e.status.team_id === projectId && e.finishedAt !== undefined)
      .sort(([, a], [, b]) => a.finishedAt! - b.finishedAt!);
    for (const [key] of finished.slice(0, Math.max(0, finished.length - this.limits.maxKept)))
      this.entries.delete(key);
  }
}
