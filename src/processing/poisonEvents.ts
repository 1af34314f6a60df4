import { isDependencyUnavailable } from '../db/postgres.ts';

/**
 * SQLSTATE classes that say the database cannot do the work now, whatever the events: connection
 * (08), transaction rollback — serialization, deadlock (40), insufficient resources — disk full,
 * too many connections (53), operator intervention — shutdown, statement timeout (57), system
 * error — I/O (58), internal error (XX); and lock not available (55P03), object in use (55006).
 */
const TRANSIENT_SQLSTATE_CLASSES = new Set(['08', '40', '53', '57', '58', 'XX']);
const TRANSIENT_SQLSTATES = new Set(['55P03', '55006']);
/**
 * ClickHouse error codes of the same kind: timeouts, memory, disk, too many parts or queries,
 * network, a table or database missing for a moment (a rebuild swapping tables), a read-only
 * replica, an insert of unknown status, Keeper and Poco (socket) errors.
 */
const TRANSIENT_CLICKHOUSE_CODES = new Set([
  '60',
  '81',
  '159',
  '160',
  '164',
  '202',
  '203',
  '209',
  '210',
  '236',
  '241',
  '242',
  '243',
  '252',
  '319',
  '394',
  '425',
  '999',
  '1000',
]);
const TRANSIENT_MESSAGES = /socket hang up|Timeout error|network error|ECONNREFUSED|ECONNRESET/i;

/**
 * A read model that reads another one (the ClickHouse models read what the persons projection
 * assigned) waited for it to reach a position, and it has not yet: retried, never parked.
 */
export class ReadModelBehind extends Error {}

/**
 * Whether a failed apply is about the stores (down, overloaded, out of disk: retried until they
 * heal, never parked) rather than about the events (a value the store refuses, a bug, a
 * constraint: the batch is split and the event that fails alone is parked). What is not known to
 * be transient counts as the events' fault: a lone event is parked only after it failed alone
 * several times, and a parked event can be replayed once the cause is fixed.
 */
export function isTransientFailure(error: unknown): boolean {
  if (error instanceof ReadModelBehind || isDependencyUnavailable(error)) return true;
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (/^E[A-Z]+$/.test(code)) return true; // a Node system error: ENOSPC, EMFILE, ECONNRESET…
    if (/^[0-9A-Z]{5}$/.test(code))
      return TRANSIENT_SQLSTATES.has(code) || TRANSIENT_SQLSTATE_CLASSES.has(code.slice(0, 2));
    if (/^\d{1,4}$/.test(code)) return TRANSIENT_CLICKHOUSE_CODES.has(code);
  }
  return error instanceof Error && TRANSIENT_MESSAGES.test(error.message);
}

export type PoisonHandling<T> = Readonly<{
  /** applies the events, all or none */
  apply(events: T[]): Promise<void>;
  /** sets the event aside and moves the read model past it */
  park(event: T, error: unknown, attempts: number): Promise<void>;
  /** how often a whole batch, and then a lone event, is tried before it is split or parked */
  attempts: number;
  /** false: a transient failure is thrown to the caller instead of retried (a rebuild fails) */
  retryTransient: boolean;
  /** waits before try `attempt` + 1 */
  delay(attempt: number): Promise<void>;
  /** true once the caller is stopping: the failure is thrown instead of retried */
  stopping?(): boolean;
  onFailure?(
    failure: Readonly<{
      error: unknown;
      events: readonly T[];
      attempt: number;
      transient: boolean;
    }>,
  ): void;
}>;

/**
 * Applies a batch so that no single event can stop the read model. A batch that keeps failing for
 * a reason about its events is split in halves, each applied on its own (one try, split again on
 * failure), down to the event that fails alone; that one is tried `attempts` times and parked,
 * and every other event of the batch is applied, in log order. A transient failure (the stores)
 * is retried with backoff for as long as it lasts, at any size.
 */
export async function applyOrPark<T>(events: T[], h: PoisonHandling<T>): Promise<void> {
  await applyPart(events, h, true);
}

async function applyPart<T>(events: T[], h: PoisonHandling<T>, whole: boolean): Promise<void> {
  let tries = 0;
  let failures = 0;
  for (;;) {
    try {
      await h.apply(events);
      return;
    } catch (error) {
      tries++;
      const transient = isTransientFailure(error);
      h.onFailure?.({ error, events, attempt: tries, transient });
      if (h.stopping?.() || (transient && !h.retryTransient)) throw error;
      if (!transient) failures++;
      if (!transient && events.length > 1 && (!whole || failures >= h.attempts)) {
        const half = Math.ceil(events.length / 2);
        await applyPart(events.slice(0, half), h, false);
        await applyPart(events.slice(half), h, false);
        return;
      }
      if (!transient && events.length === 1 && failures >= h.attempts) {
        await parkWithRetry(events[0]!, error, failures, h);
        return;
      }
      await h.delay(tries);
    }
  }
}

async function parkWithRetry<T>(
  event: T,
  cause: unknown,
  attempts: number,
  h: PoisonHandling<T>,
): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      await h.park(event, cause, attempts);
      return;
    } catch (error) {
      h.onFailure?.({
        error,
        events: [event],
        attempt: tries,
        transient: isTransientFailure(error),
      });
      if (h.stopping?.() || !h.retryTransient) throw error;
      await h.delay(tries);
    }
  }
}
