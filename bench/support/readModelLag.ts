import type pg from 'pg';

/**
 * How far the persons and ClickHouse read models are behind the log, read from the embedded
 * Postgres: checkpoints in `projection_checkpoints`, the head `max(position)` of `event_log`.
 * Lag is the age of the oldest logged event of the captured types a read model has not applied
 * yet (0 when it has them all); backlog is the head minus its checkpoint, in log positions.
 */
export type ReadModelIds = { persons: string; clickhouse: string };
export type ReadModelState = { lagMs: number; backlog: number };

/** The newest version of each read model's checkpoint (`persons@1`, `clickhouse:events@1`, …). */
export async function readModelIds(db: pg.Client): Promise<ReadModelIds> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM projection_checkpoints');
  const newest = (prefix: string) => {
    const ids = rows
      .map((r) => r.id)
      .filter((id) => id.startsWith(`${prefix}@`))
      .sort((a, b) => Number(b.split('@')[1]) - Number(a.split('@')[1]));
    if (!ids[0]) throw new Error(`no ${prefix}@N checkpoint among ${rows.map((r) => r.id)}`);
    return ids[0];
  };
  return { persons: newest('persons'), clickhouse: newest('clickhouse:events') };
}

/**
 * The types the load appends (a read model's checkpoint moves to the last event it reads, so an
 * event of a type it does not read would show as lag for ever): those logged after `since`.
 */
export async function loggedTypesSince(db: pg.Client, since: number): Promise<string[]> {
  const { rows } = await db.query<{ type: string }>(
    'SELECT DISTINCT type FROM event_log WHERE position > $1',
    [since],
  );
  return rows.length ? rows.map((r) => r.type) : ['EventCaptured'];
}

export async function logHead(db: pg.Client): Promise<number> {
  const { rows } = await db.query<{ head: string | null }>(
    'SELECT max(position) AS head FROM event_log',
  );
  return Number(rows[0]!.head ?? 0);
}

const STATE_SQL = `
  SELECT c.id,
         (SELECT max(position) FROM event_log) - c.position AS backlog,
         COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - (
           SELECT recorded_at FROM event_log e
            WHERE e.position > c.position AND e.type = ANY($2) ORDER BY e.position LIMIT 1)) * 1000, 0) AS lag_ms
    FROM projection_checkpoints c WHERE c.id = ANY($1)`;

export async function readModelStates(
  db: pg.Client,
  ids: ReadModelIds,
  types: string[],
): Promise<{ persons: ReadModelState; clickhouse: ReadModelState }> {
  const { rows } = await db.query<{ id: string; backlog: string; lag_ms: string }>(STATE_SQL, [
    [ids.persons, ids.clickhouse],
    types,
  ]);
  const of = (id: string): ReadModelState => {
    const row = rows.find((r) => r.id === id);
    return {
      lagMs: Number(row?.lag_ms ?? Number.NaN),
      backlog: Number(row?.backlog ?? Number.NaN),
    };
  };
  return { persons: of(ids.persons), clickhouse: of(ids.clickhouse) };
}

/** Seconds until both read models have every event of `types`, polled every 100 ms. */
export async function waitCaughtUp(
  db: pg.Client,
  ids: ReadModelIds,
  types: string[],
  timeoutMs = 600_000,
): Promise<number> {
  const started = performance.now();
  for (;;) {
    const s = await readModelStates(db, ids, types);
    if (s.persons.lagMs === 0 && s.clickhouse.lagMs === 0)
      return (performance.now() - started) / 1000;
    if (performance.now() - started > timeoutMs)
      throw new Error(`read models not caught up after ${timeoutMs} ms: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export type Percentiles = { p50: number; p99: number; max: number };
const percentiles = (values: number[]): Percentiles => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? 0 };
};

export type LagSummary = {
  samples: number;
  persons: Percentiles;
  clickhouse: Percentiles;
  /** the largest backlog of either read model over the run, its first half and its last tenth */
  backlogMax: number;
  backlogFirstHalf: number;
  backlogEnd: number;
};

/** Samples both read models every `everyMs` until `stop()`, one query a sample. */
export function startLagSampler(db: pg.Client, ids: ReadModelIds, types: string[], everyMs = 50) {
  const persons: number[] = [];
  const clickhouse: number[] = [];
  const backlog: number[] = [];
  let sampling = true;
  const loop = (async () => {
    while (sampling) {
      const s = await readModelStates(db, ids, types);
      persons.push(s.persons.lagMs);
      clickhouse.push(s.clickhouse.lagMs);
      backlog.push(Math.max(s.persons.backlog, s.clickhouse.backlog));
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop(): Promise<LagSummary> {
      sampling = false;
      await loop;
      const tail = backlog.slice(Math.floor(backlog.length * 0.9));
      return {
        samples: persons.length,
        persons: percentiles(persons),
        clickhouse: percentiles(clickhouse),
        backlogMax: Math.max(0, ...backlog),
        backlogFirstHalf: Math.max(0, ...backlog.slice(0, Math.ceil(backlog.length / 2))),
        backlogEnd: Math.max(0, ...tail),
      };
    },
  };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const pcts = (p: Percentiles) => `p50 ${fmt(p.p50)} / p99 ${fmt(p.p99)} / max ${fmt(p.max)} ms`;
export const describeLag = (l: LagSummary) =>
  `persons ${pcts(l.persons)}, ClickHouse ${pcts(l.clickhouse)} (${l.samples} samples); backlog max ${fmt(l.backlogMax)}, first half ${fmt(l.backlogFirstHalf)}, last tenth ${fmt(l.backlogEnd)} positions`;
