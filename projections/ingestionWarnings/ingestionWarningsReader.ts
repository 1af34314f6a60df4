import type pg from 'pg';

export type IngestionWarning = {
  type: string;
  timestamp: string;
  details: Record<string, unknown>;
};
export type IngestionWarningGroup = {
  type: string;
  lastSeen: string;
  warnings: IngestionWarning[];
  count: number;
};

/**
 * The reader of `ingestion_warnings`. The list also holds the merge refusals and illegal ids the
 * persons fold records (`person_ingestion_warnings`, a table of the persons read model), as
 * PostHog lists both: they are read here, in the same statement, so the grouping, the 50 newest
 * per type and the counts cover both.
 */
export type IngestionWarningsReader = ReturnType<typeof ingestionWarningsReader>;

export const ingestionWarningsReader = (pool: pg.Pool) => ({
  /** Warnings of the last `days` days grouped by type, newest group first; each group lists its 50 newest. */
  async groupedByType(projectId: number, days: number): Promise<IngestionWarningGroup[]> {
    const { rows } = await pool.query<{
      type: string;
      last_seen: Date;
      count: string;
      warnings: IngestionWarning[];
    }>(
      `SELECT type, max(at) AS last_seen, count(*) AS count,
              (array_agg(jsonb_build_object('type', type, 'timestamp', to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'details', details) ORDER BY at DESC))[1:50] AS warnings
         FROM (SELECT project_id, type, details, at FROM ingestion_warnings
               UNION ALL
               -- merge refusals and illegal ids, found by the persons projection
               SELECT project_id, type, details, at FROM person_ingestion_warnings) w
        WHERE project_id = $1 AND at > now() - make_interval(days => $2)
        GROUP BY type ORDER BY max(at) DESC`,
      [projectId, days],
    );
    return rows.map((r) => ({
      type: r.type,
      lastSeen: r.last_seen.toISOString(),
      warnings: r.warnings,
      count: Number(r.count),
    }));
  },
});
