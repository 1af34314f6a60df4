import { earliestEventAt } from '../../projections/analytics/earliestEventReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';

const DEFAULT_DAYS = 7;

/**
 * PostHog's `date_from=all`: from the project's earliest event (7 days ago when it has none),
 * given as that instant so the range code aligns it to its interval like any other date.
 */
export async function resolveAll<Q extends { date_from?: string | undefined }>(
  ctx: AppContext,
  ch: ClickHouse,
  projectId: number,
  q: Q,
): Promise<Q> {
  if (q.date_from !== 'all') return q;
  await awaitAnalytics(ctx);
  const earliest = await earliestEventAt(ch, projectId);
  const from = earliest ?? new Date(ctx.now().getTime() - DEFAULT_DAYS * 86_400_000);
  return { ...q, date_from: from.toISOString() };
}
