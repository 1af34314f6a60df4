import type pg from 'pg';
import type { FlagEditor } from './canEditFlag.ts';

/** The caller's roles, read before deciding so that the decider itself stays pure. */
export async function loadFlagEditor(pool: pg.Pool, userId: number, projectLevel: number): Promise<FlagEditor> {
  const { rows } = await pool.query<{ id: string; level: number }>(
    `SELECT r.id, r.feature_flags_access_level AS level
       FROM role_members m JOIN roles r ON r.id = m.role_id WHERE m.user_id = $1`,
    [userId],
  );
  return { userId, projectLevel, roles: new Map(rows.map((r) => [r.id, r.level])) };
}
