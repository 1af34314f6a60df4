import type pg from 'pg';

/** The only reader of `feature_flag_hash_key_overrides`. */
export const hashKeyOverridesReader = (pool: pg.Pool) => ({
  /** flag key → hash key for any of these distinct ids (a person's): the earliest recorded wins. */
  async forDistinctIds(
    projectId: number,
    distinctIds: readonly string[],
  ): Promise<Record<string, string>> {
    if (distinctIds.length === 0) return {};
    const { rows } = await pool.query<{ flag_key: string; hash_key: string }>(
      `SELECT DISTINCT ON (flag_key) flag_key, hash_key FROM feature_flag_hash_key_overrides
        WHERE project_id = $1::int AND distinct_id = ANY($2::text[])
        ORDER BY flag_key, position`,
      [projectId, distinctIds],
    );
    return Object.fromEntries(rows.map((r) => [r.flag_key, r.hash_key]));
  },

  /** The (distinct id, flag key) pairs already recorded, as `${distinctId}\0${flagKey}`. */
  async existing(projectId: number, distinctIds: readonly string[]): Promise<Set<string>> {
    const { rows } = await pool.query<{ distinct_id: string; flag_key: string }>(
      `SELECT distinct_id, flag_key FROM feature_flag_hash_key_overrides
        WHERE project_id = $1::int AND distinct_id = ANY($2::text[])`,
      [projectId, distinctIds],
    );
    return new Set(rows.map((r) => `${r.distinct_id}\0${r.flag_key}`));
  },
});
export type HashKeyOverridesReader = ReturnType<typeof hashKeyOverridesReader>;
