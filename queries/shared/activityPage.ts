import type { AccessReader, ActivityUser } from '../../projections/access/accessReader.ts';

/**
 * A page of activity entries, newest first (log position), each with the user who acted (from the
 * users read model; null for system changes), in the shape `{count, results}`.
 */
export async function activityPage<E extends { userId?: number; position: bigint }>(
  users: Pick<AccessReader, 'activityUsers'>,
  entries: readonly E[],
  page: { limit: number; offset: number },
): Promise<{
  count: number;
  results: (Omit<E, 'userId' | 'position'> & { user: ActivityUser | null })[];
}> {
  const slice = [...entries]
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
