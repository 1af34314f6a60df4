import type pg from 'pg';

/**
 * Advisory lock classes (the two-key form, apart from every one-key lock such as the log's
 * append lock): 'pers' for a distinct id, 'grps' for a project's groups and group types.
 */
const DISTINCT_ID_LOCKS = 0x70657273;
const GROUP_LOCKS = 0x67727073;

/**
 * What lets several ingestion workers write the persons tables at once (docs/SCALING.md). A
 * worker holds, until its batch commits, a lock on every distinct id whose mapping or person it
 * reads or writes — the ids its events name, then every id of each person it loaded (`load`
 * widens the set and reads again until it is closed) — so two workers that meet on a person,
 * through any of its ids, take turns. A lock on a key, not `FOR UPDATE` on a row, because the row
 * may not exist yet: two workers must not both create a person for one distinct id. Keys are
 * locked in sorted order; a later round may still close a cycle with another worker, which
 * Postgres ends with a deadlock error (40P01): a failure of the store, so the batch is retried,
 * never parked.
 */
export async function lockDistinctIds(
  tx: pg.PoolClient,
  keys: Iterable<string>,
  held: Set<string>,
): Promise<void> {
  const fresh = [...new Set(keys)].filter((k) => !held.has(k)).sort();
  if (fresh.length === 0) return;
  // unnest hands the keys over in order, and the aggregate takes each lock in that order
  await tx.query(
    'SELECT count(pg_advisory_xact_lock($1, hashtext(k))) FROM unnest($2::text[]) AS u(k)',
    [DISTINCT_ID_LOCKS, fresh],
  );
  for (const k of fresh) held.add(k);
}

/**
 * Group types get their index in order of first sight and a group's properties are read then
 * written whole: a batch that may touch either holds its projects' group lock (taken before any
 * distinct id's, in project order).
 */
export async function lockGroups(tx: pg.PoolClient, projects: Iterable<number>): Promise<void> {
  const sorted = [...new Set(projects)].sort((a, b) => a - b);
  if (sorted.length === 0) return;
  await tx.query('SELECT count(pg_advisory_xact_lock($1, p)) FROM unnest($2::int[]) AS u(p)', [
    GROUP_LOCKS,
    sorted,
  ]);
}
