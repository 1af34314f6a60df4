/**
 * Funnel correlation: which events go with converting (reaching the last step) or dropping off
 * (reaching step 1 only partly), among the persons of a funnel (funnelReader.ts). Events are
 * those the person did inside their path through the funnel (funnelPaths.ts), as PostHog counts
 * them, the funnel's own step events left out.
 */
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { runEventsQuery } from '../events/eventsReader.ts';
import { Params } from '../events/sqlParams.ts';
import { eventsWithPersons, PERSON_SQL, seriesConditions } from './analyticsSql.ts';
import { funnelPathsSql } from './funnelPaths.ts';
import { type FunnelInput, funnelPerPerson } from './funnelReader.ts';

export type EventCorrelation = { event: string; success: number; failure: number };
export type Outcome = { person: string; converted: boolean };

function outcomes(ch: ClickHouse, input: FunnelInput, params: Params): string {
  return `SELECT person, reached = ${params.number(input.steps.length)} AS converted
            FROM (${funnelPerPerson(ch, input, params)}) WHERE reached >= 1`;
}

/**
 * The other events each funnel person did inside their path, as PostHog counts them: after the
 * path's step-1 event and before its last step's (converted), or before the window's end after
 * step 1 (dropped off); in the date range too.
 */
function personEvents(ch: ClickHouse, input: FunnelInput, params: Params): string {
  const steps = input.steps.flatMap((s) => (s.event === null ? [] : [s.event]));
  const w = params.number(Math.max(0, Math.floor(input.windowSeconds)) * 1_000_000);
  const events = `SELECT toString(${PERSON_SQL}) AS person, e.event AS event,
                         toInt64(toUnixTimestamp64Micro(e.timestamp)) AS us
                    FROM ${eventsWithPersons(ch, params, input.projectId)}
                   WHERE ${seriesConditions({ ...input, event: null }, params).join(' AND ')}
                     AND NOT has(${params.strings(steps)}, e.event)`;
  return `SELECT DISTINCT pe.person AS person, pe.event AS event
            FROM (${events}) AS pe
            INNER JOIN (${funnelPathsSql(ch, input, params)}) AS b ON b.person = pe.person
           WHERE pe.us > b.first_us AND pe.us < coalesce(b.final_us, b.first_us + ${w})`;
}

/** Persons who converted / dropped off in total, and per other event: one pass over the funnel. */
export async function eventCorrelations(
  ch: ClickHouse,
  input: FunnelInput,
): Promise<{ successTotal: number; failureTotal: number; events: EventCorrelation[] }> {
  const params = new Params();
  // Each funnel person once, with the other events they did; the NUL "event" (no event name
  // holds one: capture replaces it) counts every person, for the totals.
  const rows = await runEventsQuery<{ event: string; success: number; failure: number }[]>(
    ch,
    `SELECT event, countIf(o.converted) AS success, countIf(NOT o.converted) AS failure
       FROM (${outcomes(ch, input, params)}) AS o
       LEFT JOIN (SELECT person, groupArray(event) AS events FROM (${personEvents(ch, input, params)})
                   GROUP BY person) AS pe ON pe.person = o.person
      ARRAY JOIN arrayPushFront(pe.events, '\\0') AS event
      GROUP BY event ORDER BY event`,
    params,
    'JSONEachRow',
  );
  const totals = rows.find((r) => r.event === '\0');
  return {
    successTotal: Number(totals?.success ?? 0),
    failureTotal: Number(totals?.failure ?? 0),
    events: rows
      .filter((r) => r.event !== '\0')
      .map((r) => ({ event: r.event, success: Number(r.success), failure: Number(r.failure) })),
  };
}

/** Every person of the funnel with whether they converted (for person property correlation). */
export async function funnelOutcomes(ch: ClickHouse, input: FunnelInput): Promise<Outcome[]> {
  const params = new Params();
  const rows = await runEventsQuery<{ person: string; converted: number }[]>(
    ch,
    `SELECT person, converted FROM (${outcomes(ch, input, params)}) ORDER BY person`,
    params,
    'JSONEachRow',
  );
  return rows.map((r) => ({ person: r.person, converted: Boolean(Number(r.converted)) }));
}

/** The persons who converted (or dropped off) and did `event` in the range. */
export async function correlationEventActors(
  ch: ClickHouse,
  input: FunnelInput,
  event: string,
  converted: boolean,
  limit: number,
  offset: number,
): Promise<{ personUuids: string[]; hasMore: boolean }> {
  const params = new Params();
  const rows = await runEventsQuery<{ person: string }[]>(
    ch,
    `SELECT o.person AS person FROM (${outcomes(ch, input, params)}) AS o
      WHERE o.converted = ${converted ? 1 : 0}
        AND o.person IN (SELECT person FROM (${personEvents(ch, input, params)}) WHERE event = ${params.string(event)})
      ORDER BY person LIMIT ${params.number(limit + 1)} OFFSET ${params.number(offset)}`,
    params,
    'JSONEachRow',
  );
  return { personUuids: rows.slice(0, limit).map((r) => r.person), hasMore: rows.length > limit };
}
