import type pg from 'pg';
import type { FlagEditor } from '../../commands/featureFlags/canEditFlag.ts';
import { type FlagRow, type FlagView, flagSelect, toFlagView } from './flagView.ts';

/** Soft-deleted flags are hidden from the list, as in PostHog; a GET by id still finds them. */
export async function listFeatureFlags(
  pool: pg.Pool,
  projectId: number,
  page: { limit: number; offset: number },
  editor: FlagEditor,
): Promise<{ count: number; results: FlagView[] }> {
  const [count, rows] = await Promise.all([
    pool.query<{ n: string }>('SELECT count(*) AS n FROM feature_flags WHERE project_id = $1 AND NOT deleted', [projectId]),
    pool.query<FlagRow>(
      `${flagSelect} WHERE f.project_id = $1 AND NOT f.deleted ORDER BY f.created_at DESC, f.id DESC LIMIT $2 OFFSET $3`,
      [projectId, page.limit, page.offset],
    ),
  ]);
  return { count: Number(count.rows[0]!.n), results: rows.rows.map((r) => toFlagView(r, editor)) };
}

/** Ids are Postgres `integer`s: anything outside that range names no row (and must not reach SQL). */
export const isDbInteger = (n: number) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647;

export async function getFeatureFlag(
  pool: pg.Pool,
  projectId: number,
  flagId: number,
  editor: FlagEditor,
): Promise<FlagView | undefined> {
  if (!isDbInteger(flagId)) return undefined;
  const { rows } = await pool.query<FlagRow>(`${flagSelect} WHERE f.project_id = $1 AND f.id = $2`, [projectId, flagId]);
  return rows[0] ? toFlagView(rows[0], editor) : undefined;
}

/** Another live flag of the project using `key` (the command side's uniqueness check). */
export async function isFlagKeyTaken(pool: pg.Pool, projectId: number, key: string, exceptFlagId?: number): Promise<boolean> {
  const { rowCount } = await pool.query(
    'SELECT 1 FROM feature_flags WHERE project_id = $1 AND key = $2 AND NOT deleted AND id <> $3',
    [projectId, key, exceptFlagId ?? -1],
  );
  return (rowCount ?? 0) > 0;
}
