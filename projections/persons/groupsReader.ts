import type pg from 'pg';

/** A row of the persons read model's `groups` table. */
export type GroupRecord = {
  group_type_index: number;
  group_key: string;
  group_properties: Record<string, unknown>;
  created_at: Date;
};

export type GroupsReader = ReturnType<typeof groupsReader>;

const columns =
  'group_type_index, group_key, properties AS group_properties, created_at FROM groups';

/** LIKE wildcards in the user's text match themselves. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Reads the `groups` table of the persons read model (the persons projection writes it from
 * `$groupidentify`). Search is PostHog's: the key, or the `name` property, contains the text
 * (case-insensitive).
 */
export const groupsReader = (pool: pg.Pool) => ({
  async list(
    projectId: number,
    groupTypeIndex: number,
    search: string | undefined,
    page: { limit: number; offset: number },
  ): Promise<{ count: number; rows: GroupRecord[] }> {
    const params: unknown[] = [projectId, groupTypeIndex];
    let where = 'project_id = $1 AND group_type_index = $2';
    if (search) {
      params.push(likePattern(search));
      where += ` AND (group_key ILIKE $3 OR properties->>'name' ILIKE $3)`;
    }
    const [count, rows] = await Promise.all([
      pool.query<{ n: string }>(`SELECT count(*) AS n FROM groups WHERE ${where}`, params),
      pool.query<GroupRecord>(
        `SELECT ${columns} WHERE ${where}
          ORDER BY created_at DESC, group_key LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, page.limit, page.offset],
      ),
    ]);
    return { count: Number(count.rows[0]!.n), rows: rows.rows };
  },

  async find(
    projectId: number,
    groupTypeIndex: number,
    groupKey: string,
  ): Promise<GroupRecord | undefined> {
    const { rows } = await pool.query<GroupRecord>(
      `SELECT ${columns} WHERE project_id = $1 AND group_type_index = $2 AND group_key = $3`,
      [projectId, groupTypeIndex, groupKey],
    );
    return rows[0];
  },
});
