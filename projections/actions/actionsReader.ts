import type pg from 'pg';
import type { ActionStep } from '../../commands/actions/model/action.ts';

export type ActionRow = {
  id: number;
  project_id: number;
  name: string;
  description: string;
  tags: string[];
  post_to_slack: boolean;
  slack_message_format: string;
  steps: ActionStep[];
  pinned_at: Date | null;
  deleted: boolean;
  created_at: Date;
  created_by_user_id: number | null;
  updated_at: Date;
  version: number;
};

const isDbInteger = (n: number) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647;

/** The only reader of the `actions` read model. */
export const actionsReader = (pool: pg.Pool) => ({
  /** A page of the project's live actions, by name (PostHog: never calculated, then name). */
  async list(
    projectId: number,
    page: { limit: number; offset: number },
  ): Promise<{ count: number; rows: ActionRow[] }> {
    const [count, rows] = await Promise.all([
      pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM actions WHERE project_id = $1 AND NOT deleted',
        [projectId],
      ),
      pool.query<ActionRow>(
        `SELECT * FROM actions WHERE project_id = $1 AND NOT deleted
          ORDER BY name, id LIMIT $2 OFFSET $3`,
        [projectId, page.limit, page.offset],
      ),
    ]);
    return { count: Number(count.rows[0]!.n), rows: rows.rows };
  },

  /** One action; a soft-deleted one too (PostHog retrieves and patches deleted actions). */
  async get(projectId: number, id: number): Promise<ActionRow | undefined> {
    if (!isDbInteger(id)) return undefined;
    const { rows } = await pool.query<ActionRow>(
      'SELECT * FROM actions WHERE project_id = $1 AND id = $2',
      [projectId, id],
    );
    return rows[0];
  },

  /** The live action of the project with this name, other than `exceptId` (names are unique). */
  async nameTakenBy(projectId: number, name: string, exceptId?: number): Promise<number | null> {
    const { rows } = await pool.query<{ id: number }>(
      `SELECT id FROM actions WHERE project_id = $1 AND name = $2 AND NOT deleted
          AND id <> COALESCE($3, -1) ORDER BY id LIMIT 1`,
      [projectId, name, exceptId ?? null],
    );
    return rows[0]?.id ?? null;
  },
});
export type ActionsReader = ReturnType<typeof actionsReader>;
