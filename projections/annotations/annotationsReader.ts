import type pg from 'pg';
import type { AnnotationScope } from '../../commands/annotations/model/annotation.ts';

export type AnnotationRow = {
  id: number;
  project_id: number;
  content: string | null;
  date_marker: Date | null;
  scope: AnnotationScope;
  creation_type: 'USR' | 'GIT';
  dashboard_item: number | null;
  dashboard_id: number | null;
  is_emoji: boolean;
  deleted: boolean;
  created_at: Date;
  created_by_user_id: number | null;
  updated_at: Date;
  version: number;
};

/** What the list narrows to, as PostHog's annotation list takes it (all optional). */
export type AnnotationFilter = Readonly<{
  /** words that must all appear in the content, any case (DRF's SearchFilter) */
  search?: readonly string[] | undefined;
  scope?: AnnotationScope | undefined;
  /** date_marker at or after / at or before (inclusive, as PostHog) */
  dateFrom?: Date | undefined;
  dateTo?: Date | undefined;
  isEmoji?: boolean | undefined;
}>;

const isDbInteger = (n: number) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647;
const likePattern = (word: string) => `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The only reader of the `annotations` read model. */
export const annotationsReader = (pool: pg.Pool) => ({
  /** A page of the project's live annotations, newest marker first. */
  async list(
    projectId: number,
    filter: AnnotationFilter,
    page: { limit: number; offset: number },
  ): Promise<{ count: number; rows: AnnotationRow[] }> {
    const params: unknown[] = [projectId];
    const where = ['project_id = $1', 'NOT deleted'];
    const add = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    for (const word of filter.search ?? []) add((p) => `content ILIKE ${p}`, likePattern(word));
    if (filter.scope !== undefined) add((p) => `scope = ${p}`, filter.scope);
    if (filter.dateFrom !== undefined) add((p) => `date_marker >= ${p}`, filter.dateFrom);
    if (filter.dateTo !== undefined) add((p) => `date_marker <= ${p}`, filter.dateTo);
    if (filter.isEmoji !== undefined) add((p) => `is_emoji = ${p}`, filter.isEmoji);
    const sql = where.join(' AND ');
    const n = params.length;
    const [count, rows] = await Promise.all([
      pool.query<{ n: string }>(`SELECT count(*) AS n FROM annotations WHERE ${sql}`, params),
      pool.query<AnnotationRow>(
        `SELECT * FROM annotations WHERE ${sql}
          ORDER BY date_marker DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...params, page.limit, page.offset],
      ),
    ]);
    return { count: Number(count.rows[0]!.n), rows: rows.rows };
  },

  /** One annotation; a soft-deleted one only with `includeDeleted` (PATCH may restore it). */
  async get(
    projectId: number,
    id: number,
    includeDeleted = false,
  ): Promise<AnnotationRow | undefined> {
    if (!isDbInteger(id)) return undefined;
    const { rows } = await pool.query<AnnotationRow>(
      'SELECT * FROM annotations WHERE project_id = $1 AND id = $2 AND (NOT deleted OR $3)',
      [projectId, id, includeDeleted],
    );
    return rows[0];
  },
});
export type AnnotationsReader = ReturnType<typeof annotationsReader>;
