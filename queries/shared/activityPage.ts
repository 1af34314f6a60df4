import type { AccessReader, ActivityUser } from '../../projections/access/accessReader.ts';

/** Which entries: a page, optionally only those made after and/or before a time (exclusive). */
export type ActivityWindow = Readonly<{
  limit: number;
  offset: number;
  after?: string | undefined;
  before?: string | undefined;
}>;

/**
 * A page of activity entries, newest first (log position), each with the user who acted (from the
 * users read model; null for system changes), in the shape `{count, results}`; `after`/`before`
 * keep the entries whose `created_at` is strictly between them (`count` counts those).
 */
export async function activityPage<
  E extends { userId?: number; position: bigint; created_at: string },
>(
  users: Pick<AccessReader, 'activityUsers'>,
  all: readonly E[],
  page: ActivityWindow,
): Promise<{
  count: number;
  results: (Omit<E, 'userId' | 'position'> & { user: ActivityUser | null })[];
}> {
  const after = page.after === undefined ? undefined : Date.parse(page.after);
  const before = page.before === undefined ? undefined : Date.parse(page.before);
  const entries = all.filter((e) => {
    const at = Date.parse(e.created_at);
    return (after === undefined || at > after) && (before === undefined || at < before);
  });
  const slice = entries
    .sort((x, y) => (x.position < y.position ? 1 : -1))
    .slice(page.offset, page.offset + page.limit);
  const ids = [
    ...new Set(slice.map((e) => e.userId).filter((id): id is number => id !== undefined)),
  ];
  const byId = await users.activityUsers(ids);
  return {
    count: entries.length,
    results: slice.map(({ userId, position: _p, ...e }) => ({
      ...e,
      user: (userId !== undefined && byId.get(userId)) || null,
    })),
  };
}
