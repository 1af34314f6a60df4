/**
 * Where each funnel person's path lies in time (PostHog's `first_timestamp` / `final_timestamp`
 * of its funnel actors), for funnel correlation, which counts only the events inside it.
 */
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import type { Params } from '../events/sqlParams.ts';
import { type FunnelInput, funnelPerPerson } from './funnelReader.ts';

/**
 * Per person who reached step 1: `person`, `converted`, `first_us` (the path's step-1 event) and
 * `final_us` (its last step's event when converted, else NULL), in µs since the epoch.
 *
 * The path is the earliest one that reaches as far as the person got. From a step-1 event, the
 * steps are taken greedily in time order within the window (ordered and strict funnels; a strict
 * funnel's persons and steps are still windowFunnel's) or, unordered, each step's first event
 * within the window after any step's event.
 */
export function funnelPathsSql(ch: ClickHouse, input: FunnelInput, params: Params): string {
  const n = input.steps.length;
  const w = params.number(Math.max(0, Math.floor(input.windowSeconds)) * 1_000_000);
  const within = (x: string) => `${x}.1 >= a.1 AND ${x}.1 <= a.1 + ${w}`;
  // (anchor time, steps done, time of the last step done), one per possible anchor
  const attempts =
    input.order === 'unordered'
      ? `arrayMap(a -> (a.1, arrayCount(i -> i > 0, a.2), arrayMax(i -> if(i > 0, evs[i].1, a.1), a.2)),
           arrayMap(a -> (a.1, arrayMap(s -> arrayFirstIndex(x -> bitTest(x.2, s) AND ${within('x')}, evs), range(${n}))),
             arrayFilter(x -> x.2 > 0, evs)))`
      : `arrayMap(a -> (a.1, a.2.1, a.2.2),
           arrayMap(a -> (a.1, arrayFold((acc, x) -> if(acc.1 < ${n} AND ${within('x')} AND bitTest(x.2, acc.1), (acc.1 + 1, x.1), acc),
                                           evs, (toUInt64(0), toInt64(0)))),
             arrayFilter(x -> bitTest(x.2, 0), evs)))`;
  return `SELECT person, reached = ${n} AS converted, path.1 AS first_us,
                 if(reached = ${n}, path.3, NULL) AS final_us
            FROM (SELECT person, reached, arrayFirst(t -> t.2 >= reached, ${attempts}) AS path
                    FROM (${funnelPerPerson(ch, input, params, true)}) WHERE reached >= 1)`;
}
