/** The project's first event, for PostHog's `date_from=all`. */
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { runEventsQuery } from '../events/eventsReader.ts';
import { Params } from '../events/sqlParams.ts';

/** The timestamp of the project's earliest event, or null without events. */
export async function earliestEventAt(ch: ClickHouse, projectId: number): Promise<Date | null> {
  const params = new Params();
  const rows = await runEventsQuery<{ n: string; at: string }[]>(
    ch,
    `SELECT count() AS n, formatDateTime(min(timestamp), '%Y-%m-%dT%H:%i:%SZ', 'UTC') AS at
       FROM ${ch.database}.events WHERE team_id = ${params.number(projectId)}`,
    params,
    'JSONEachRow',
  );
  const row = rows[0];
  return row && Number(row.n) > 0 ? new Date(row.at) : null;
}
