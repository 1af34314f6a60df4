import { isDependencyUnavailable } from '../db/postgres.ts';

/**
 * SQLSTATE classes that are about the values written: cardinality violation (21: an upsert
 * touching a row twice), data exception (22: a value the type refuses), integrity constraint
 * violation (23), program limit exceeded (54: an index row too large), raised by PL/pgSQL (P0).
 * Every other class — connection (08), insufficient resources (53: disk full), operator
 * intervention (57: shutdown, statement timeout), system (58), internal (XX), transaction rollback
 * (40), a table or column missing (42: the schema, not the event), … — is about the store.
 */
const EVENT_SQLSTATE_CLASSES = new Set(['21', '22', '23', '54', 'P0']);
/**
 * ClickHouse error codes about the values inserted: cannot parse text, escape, quoted string,
 * date, date-time, number, UUID, bool (6, 25, 26, 27, 38, 41, 72, 376, 467), bad arguments (36),
 * type mismatch (53), argument out of bound (69), cannot convert type (70), incorrect data (117),
 * string too large (131), value out of range (321), NULL in an ordinary column (349), data after
 * a parsed value (632). Every other code (timeouts, memory, disk, too many parts, a missing
 * table, network, …) is about ClickHouse.
 */
const EVENT_CLICKHOUSE_CODES = new Set([
  6, 25, 26, 27, 36, 38, 41, 53, 69, 70, 72, 117, 131, 321, 349, 376, 467, 632,
]);
const TRANSIENT_MESSAGES = /socket hang up|Timeout error|network error|ECONNREFUSED|ECONNRESET/i;

/**
 * A read model that reads another one (the ClickHouse models read what the persons projection
 * assigned) waited for it to reach a position, and it has not yet: retried, never parked.
 */
export class ReadModelBehind extends Error {}

/** ClickHouse's error number: the client's `code`, or `Code: N.` in the message, or in a cause. */
function clickHouseCode(error: unknown): number | undefined {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 3; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^\d{1,4}$/.test(code)) return Number(code);
    const m = e instanceof Error ? /\bCode: (\d{1,4})\./.exec(e.message) : null;
    if (m) return Number(m[1]);
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Whether a failed apply is about the events (a value the store refuses, a constraint, a bug in
 * the fold: the batch is split and the event that fails alone is parked) rather than about the
 * stores (down, overloaded, out of disk, a table dropped under the read model: retried until they
 * heal, never parked — parking every event during an outage would empty the read model). A store
 * error counts as the events' only when its code says so; an error without a store's code is the
 * fold's own (a `TypeError`: a bug), unless its message says the connection failed.
 */
export function isAboutTheEvents(error: unknown): boolean {
  if (error instanceof ReadModelBehind || isDependencyUnavailable(error)) return false;
  if (typeof error !== 'object' || error === null) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (/^E[A-Z]+$/.test(code)) return false; // a Node system error: ENOSPC, EMFILE, ECONNRESET…
    if (/^[0-9A-Z]{5}$/.test(code)) return EVENT_SQLSTATE_CLASSES.has(code.slice(0, 2));
  }
  const clickHouse = clickHouseCode(error);
  if (clickHouse !== undefined) return EVENT_CLICKHOUSE_CODES.has(clickHouse);
  return !(error instanceof Error && TRANSIENT_MESSAGES.test(error.message));
}

/** A failure of the stores: retried for as long as it lasts (see `isAboutTheEvents`). */
export const isTransientFailure = (error: unknown): boolean => !isAboutTheEvents(error);

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
