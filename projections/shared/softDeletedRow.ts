import type pg from 'pg';

/**
 * A soft delete (`deleted` true) or a restore (false) of a row of a fields resource's read model
 * (actions, annotations): the row stays, and its `updated_at` and `version` move as on any change.
 * `table` is the projection's own table name, never input.
 */
export const setRowDeleted = (
  tx: pg.PoolClient,
  table: 'actions' | 'annotations',
  id: number,
  deleted: boolean,
  at: string,
) =>
  tx.query(
    `UPDATE ${table} SET deleted = $2, updated_at = $3, version = version + 1 WHERE id = $1`,
    [id, deleted, at],
  );
