/**
 * Funnels over the ClickHouse events table, persons after merges (analyticsSql.ts). Per person,
 * the furthest step reached inside the conversion window (`windowFunnel`; strict order with
 * `strict_order`; unordered: from the best first event, the steps done within the window), and
 * the breakdown value of the person's first step-1 event.
 */
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { type CompiledActionStep, compileActionSteps } from '../events/actionStepsSql.ts';
import { runEventsQuery } from '../events/eventsReader.ts';
import { compilePropertyFilters } from '../events/propertyFilters.ts';
import { Params } from '../events/sqlParams.ts';
import {
  BREAKDOWN_OTHER,
  type Breakdown,
  breakdownSql,
  DEFAULT_BREAKDOWN_LIMIT,
  eventsWithPersons,
  PERSON_SQL,
  type SeriesInput,
  seriesConditions,
} from './analyticsSql.ts';

export type FunnelStep = {
  event: string | null;
  properties: unknown;
  /** an action as the step: its id, and its steps once read from the actions read model */
  action?: { id: number; steps?: readonly CompiledActionStep[] };
};
export type FunnelOrder = 'ordered' | 'strict' | 'unordered';

export type FunnelInput = Omit<SeriesInput, 'event'> & {
  steps: readonly FunnelStep[];
  order: FunnelOrder;
  /** conversion window in seconds (inclusive: a step exactly at the window's end counts) */
  windowSeconds: number;
  breakdown?: Breakdown;
  /** with a breakdown: the values kept (most step-1 persons first); the rest are "Other" */
  breakdownLimit?: number;
};

function stepCondition(step: FunnelStep, input: FunnelInput, params: Params): string {
  const parts: string[] = [];
  if (step.action) {
    // a step whose action was never read would match every event: a bug, not a request's fault
    if (!step.action.steps) throw new Error(`funnel step: action ${step.action.id} was not read`);
    parts.push(compileActionSteps(step.action.steps, params, input.now));
  } else if (step.event !== null) parts.push(`e.event = ${params.string(step.event)}`);
  const filters = compilePropertyFilters(step.properties, params, input.now);
  if (filters) parts.push(filters);
  return parts.length === 0 ? '1' : parts.join(' AND ');
}

/**
 * `person`, `reached` (0…n) and `bv` per person who did any step in the range; `withEvents` adds
 * `evs`, the person's events in time order as (µs since the epoch, bit i set: matches step i + 1).
 */
export function funnelPerPerson(
  ch: ClickHouse,
  input: FunnelInput,
  params: Params,
  withEvents = false,
): string {
  const conds = input.steps.map((s) => stepCondition(s, input, params));
  const window = params.number(Math.max(0, Math.floor(input.windowSeconds)));
  const ts = 'toDateTime(e.timestamp)';
  const funnel = (cs: readonly string[], mode = '') =>
    `windowFunnel(${window}${mode})(${ts}, ${cs.map((c) => `toUInt8(${c})`).join(', ')})`;
  let reached: string;
  if (input.order === 'unordered') {
    // Any step may come first: from each event of a step, the steps with an event within the
    // window after it; the best anchor wins.
    const mask = conds.map((c, i) => `toUInt32(${c}) * ${2 ** i}`).join(' + ');
    const evs = `groupArray((toUInt32(${ts}), ${mask}))`;
    reached = `arrayMax(a -> arraySum(s -> toUInt8(arrayExists(x -> bitTest(x.2, s) AND x.1 >= a.1 AND x.1 <= a.1 + ${window}, ${evs})), range(${conds.length})), ${evs})`;
  } else reached = funnel(conds, input.order === 'strict' ? ", 'strict_order'" : '');
  const bv = input.breakdown
    ? `argMinIf(${breakdownSql(input.breakdown, params)}, e.timestamp, ${conds[0]})`
    : 'NULL';
  // Strict order counts every event of the person in the range, not only the steps' events.
  const anyStep = input.order === 'strict' ? '1' : conds.map((c) => `(${c})`).join(' OR ');
  const mask = conds.map((c, i) => `toUInt64(${c}) * ${2 ** i}`).join(' + ');
  const evs = withEvents
    ? `, arraySort(x -> x.1, groupArray((toInt64(toUnixTimestamp64Micro(e.timestamp)), ${mask}))) AS evs`
    : '';
  return `SELECT toString(${PERSON_SQL}) AS person, ${reached} AS reached, ${bv} AS bv${evs}
            FROM ${eventsWithPersons(ch, params, input.projectId)}
           WHERE ${seriesConditions({ ...input, event: null }, params).join(' AND ')} AND (${anyStep})
           GROUP BY person`;
}

export type FunnelCounts = { breakdownValue: string | null; counts: number[] };

/**
 * Persons reaching each step (index 0 = step 1), per breakdown value (most step-1 persons first):
 * the top `breakdownLimit` values, the others summed as PostHog's "Other" (`BREAKDOWN_OTHER`,
 * last), so the server receives at most limit + 1 rows however many values there are.
 */
export async function funnelCounts(ch: ClickHouse, input: FunnelInput): Promise<FunnelCounts[]> {
  const params = new Params();
  const counts = input.steps.map((_, i) => `countIf(reached >= ${i + 1}) AS n${i}`).join(', ');
  const perValue = `SELECT bv AS value, ${counts}, row_number() OVER (ORDER BY n0 DESC, value) AS place
                      FROM (${funnelPerPerson(ch, input, params)}) WHERE reached >= 1 GROUP BY value`;
  const limit = params.number(input.breakdownLimit ?? DEFAULT_BREAKDOWN_LIMIT);
  const other = params.string(BREAKDOWN_OTHER);
  const sums = input.steps.map((_, i) => `sum(n${i}) AS s${i}`).join(', ');
  const rows = await runEventsQuery<Record<string, string | number | null>[]>(
    ch,
    `SELECT if(place <= ${limit}, value, ${other}) AS bv, ${sums} FROM (${perValue})
      GROUP BY bv ORDER BY bv = ${other}, s0 DESC, bv`,
    params,
    'JSONEachRow',
  );
  return rows.map((r) => ({
    breakdownValue: (r.bv as string | null) ?? null,
    counts: input.steps.map((_, i) => Number(r[`s${i}`])),
  }));
}

/**
 * The persons at `step` (1-based): n → reached step n or further; −n → reached step n − 1 and
 * not step n (dropped off before it). Optionally one breakdown value.
 */
export async function funnelActors(
  ch: ClickHouse,
  input: FunnelInput,
  step: number,
  breakdownValue: string | undefined,
  limit: number,
  offset: number,
): Promise<{ personUuids: string[]; hasMore: boolean }> {
  const params = new Params();
  const where = [
    step > 0 ? `reached >= ${params.number(step)}` : `reached = ${params.number(-step - 1)}`,
  ];
  if (step < 0) where.push('reached >= 1');
  if (breakdownValue !== undefined && input.breakdown)
    where.push(`bv = ${params.string(breakdownValue)}`);
  const rows = await runEventsQuery<{ person: string }[]>(
    ch,
    `SELECT person FROM (${funnelPerPerson(ch, input, params)}) WHERE ${where.join(' AND ')}
      ORDER BY person LIMIT ${params.number(limit + 1)} OFFSET ${params.number(offset)}`,
    params,
    'JSONEachRow',
  );
  return { personUuids: rows.slice(0, limit).map((r) => r.person), hasMore: rows.length > limit };
}
