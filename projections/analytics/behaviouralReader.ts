import type { ActionStep } from '../../commands/actions/model/action.ts';
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { compileActionSteps } from '../events/actionStepsSql.ts';
import { runEventsQuery } from '../events/eventsReader.ts';
import { dateTimeParamSql, Params } from '../events/sqlParams.ts';
import { eventsWithPersons, PERSON_SQL } from './analyticsSql.ts';

/**
 * Behavioural cohort filters: the persons (uuids, after merges) who did `event` (or an event
 * matching one of an action's `actionSteps`: none matches every event, as PostHog) since `since`
 * a number of times that `operator` (gte, exact, lte) compares with `count`. With `lte`, persons
 * who did it zero times are not among them (they have no events to count here); the caller's
 * `negation` covers "did not do".
 */
export async function personsWhoPerformed(
  ch: ClickHouse,
  input: {
    projectId: number;
    event: string;
    actionSteps?: readonly ActionStep[];
    now: Date;
    since: string;
    operator: 'gte' | 'exact' | 'lte';
    count: number;
  },
): Promise<string[]> {
  const params = new Params();
  const cmp = { gte: '>=', exact: '=', lte: '<=' }[input.operator];
  const rows = await runEventsQuery<{ person: string }[]>(
    ch,
    `SELECT toString(${PERSON_SQL}) AS person
       FROM ${eventsWithPersons(ch, params, input.projectId)}
      WHERE e.team_id = ${params.number(input.projectId)} AND pdi.deleted = 0
        AND ${input.actionSteps ? compileActionSteps(input.actionSteps, params, input.now) : `e.event = ${params.string(input.event)}`} AND e.timestamp >= ${dateTimeParamSql(input.since, params)}
      GROUP BY person HAVING count() ${cmp} ${params.number(input.count)}`,
    params,
    'JSONEachRow',
  );
  return rows.map((r) => r.person);
}
