import type pg from 'pg';
import { withTransaction } from '../../src/db/postgres.ts';

/**
 * The saved insights' result cache (issue #28): the read side's own table, not a read model. A
 * GET with `refresh` writes it; nothing folds the log into it and nothing rebuilds it — losing it
 * only means the next refresh computes again. One row per insight, keyed by project and insight,
 * holding the hash of the filters it was computed from: a result of other filters (the insight
 * was edited since) is never answered, and the next refresh replaces it. The hash is Postgres's
 * md5 of the filters as `jsonb` text, which orders keys and drops whitespace, so the same filters
 * always hash alike whatever order a client sent them in.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS insight_results (
    project_id integer NOT NULL,
    insight_id integer NOT NULL,
    filters_hash text NOT NULL,
    result jsonb NOT NULL,
    last_refresh timestamptz NOT NULL,
    PRIMARY KEY (project_id, insight_id)
  )`;

/** A result bigger than this (its JSON, in bytes) is answered but not cached: 1 MiB. */
export const INSIGHT_RESULT_MAX_BYTES = 1_048_576;

export type CachedInsightResult = { result: unknown; lastRefresh: Date };

/** Creates the table once (under the migration lock, as concurrent starters may race). */
export async function createInsightResultCache(pool: pg.Pool): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('hogstream-migrate'))`);
    await tx.query(SCHEMA);
  });
}

export const insightResultCache = (pool: pg.Pool) => ({
  /** The cached results of these insights still computed from these filters, by insight id. */
  async get(
    projectId: number,
    insights: readonly { id: number; filters: Record<string, unknown> }[],
  ): Promise<Map<number, CachedInsightResult>> {
    if (insights.length === 0) return new Map();
    const { rows } = await pool.query<{ insight_id: number; result: unknown; last_refresh: Date }>(
      `SELECT r.insight_id, r.result, r.last_refresh
         FROM insight_results r
         JOIN unnest($2::int[], $3::jsonb[]) AS w(id, filters)
           ON r.insight_id = w.id AND r.filters_hash = md5(w.filters::text)
        WHERE r.project_id = $1`,
      [projectId, insights.map((i) => i.id), insights.map((i) => JSON.stringify(i.filters))],
    );
    return new Map(
      rows.map((r) => [r.insight_id, { result: r.result, lastRefresh: new Date(r.last_refresh) }]),
    );
  },

  /** Keeps a result computed from these filters; false when it is over the size cap (not kept). */
  async put(
    projectId: number,
    insightId: number,
    filters: Record<string, unknown>,
    result: unknown,
    at: Date,
  ): Promise<boolean> {
    const json = JSON.stringify(result ?? null);
    if (Buffer.byteLength(json) > INSIGHT_RESULT_MAX_BYTES) return false;
    await pool.query(
      `INSERT INTO insight_results (project_id, insight_id, filters_hash, result, last_refresh)
       VALUES ($1, $2, md5($3::jsonb::text), $4::jsonb, $5)
       ON CONFLICT (project_id, insight_id) DO UPDATE
         SET filters_hash = EXCLUDED.filters_hash, result = EXCLUDED.result,
             last_refresh = EXCLUDED.last_refresh`,
      [projectId, insightId, JSON.stringify(filters), json, at],
    );
    return true;
  },
});
export type InsightResultCache = ReturnType<typeof insightResultCache>;
