import { type FunnelInput, funnelCounts } from '../../projections/analytics/funnelReader.ts';
import type { AppContext } from '../../src/appContext.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { resolveAll } from './allDates.ts';
import { awaitAnalytics } from './awaitAnalytics.ts';
import { type FunnelQuery, funnelInput, funnelSteps } from './funnelParams.ts';

/** A funnel step as `insights/funnel/` answers it (PostHog's legacy funnel result). */
export type FunnelStepResult = {
  /** the event name, or an action step's action id */
  action_id: string | number | null;
  name: string;
  order: number;
  type: 'events' | 'actions';
  count: number;
  breakdown_value?: string;
};

/** The funnel reader's input for a parsed filter (`date_from=all` resolved). */
export const funnelInputOf = async (
  ctx: AppContext,
  ch: ClickHouse,
  projectId: number,
  q: FunnelQuery,
): Promise<FunnelInput> =>
  funnelInput(ctx.pool, projectId, ctx.now(), await resolveAll(ctx, ch, projectId, q));

/**
 * The steps with the persons who reached each; with a breakdown, one list of steps per value.
 * `insights/funnel/` and a saved funnel insight's refresh both answer this.
 */
export async function funnelResult(
  ctx: AppContext,
  ch: ClickHouse,
  projectId: number,
  q: FunnelQuery,
): Promise<FunnelStepResult[] | FunnelStepResult[][]> {
  const funnel = await funnelInputOf(ctx, ch, projectId, q);
  const { names, steps } = funnelSteps(q);
  await awaitAnalytics(ctx);
  const groups = await funnelCounts(ch, funnel);
  const view = (g: (typeof groups)[number] | undefined) =>
    steps.map((s, i) => ({
      action_id: s.action ? s.action.id : s.event,
      name: names[i]!,
      order: i,
      type: s.action ? ('actions' as const) : ('events' as const),
      count: g?.counts[i] ?? 0,
      ...(q.breakdown ? { breakdown_value: g?.breakdownValue ?? '' } : {}),
    }));
  return q.breakdown ? groups.map(view) : view(groups[0]);
}
