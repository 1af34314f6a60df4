/**
 * Paths over the ClickHouse events table, persons after merges (analyticsSql.ts). Per person, the
 * items (page URL, screen name or event name) of the range in time order, consecutive repeats
 * collapsed; cut to start at the first `startPoint` and end at the first `endPoint` (a person
 * without them has no path), then to `stepLimit` items. Item i of a path is keyed `<i>_<item>`.
 */
import type { ClickHouse } from '../../src/runtime/clickhouse.ts';
import { runEventsQuery } from '../events/eventsReader.ts';
import { Params, propertySql } from '../events/sqlParams.ts';
import {
  eventsWithPersons,
  PERSON_SQL,
  type SeriesInput,
  seriesConditions,
} from './analyticsSql.ts';

export type PathType = '$pageview' | '$screen' | 'custom_event';

export type PathInput = Omit<SeriesInput, 'event'> & {
  pathType: PathType;
  startPoint?: string;
  endPoint?: string;
  stepLimit: number;
};

/** `person` and `path` (Array(String)) per person with a path. */
function paths(ch: ClickHouse, input: PathInput, params: Params): string {
  const item =
    input.pathType === '$pageview'
      ? `ifNull(${propertySql(['$current_url'], params)}, '')`
      : input.pathType === '$screen'
        ? `ifNull(${propertySql(['$screen_name'], params)}, '')`
        : 'e.event';
  const kind =
    input.pathType === 'custom_event'
      ? `NOT startsWith(e.event, '$')`
      : `e.event = ${params.string(input.pathType)}`;
  const collapsed = `arrayFilter((x, i) -> i = 1 OR x != raw[i - 1], raw, arrayEnumerate(raw))`;
  let path = 'collapsed';
  if (input.startPoint !== undefined)
    path = `arraySlice(${path}, indexOf(${path}, ${params.string(input.startPoint)}))`;
  if (input.endPoint !== undefined)
    path = `arraySlice(${path}, 1, indexOf(${path}, ${params.string(input.endPoint)}))`;
  return `SELECT person, arraySlice(${path}, 1, ${params.number(input.stepLimit)}) AS path FROM (
            SELECT person, ${collapsed} AS collapsed FROM (
              SELECT toString(${PERSON_SQL}) AS person,
                     arrayMap(p -> p.2, arraySort(p -> p.1, groupArray((e.timestamp, ${item})))) AS raw
                FROM ${eventsWithPersons(ch, params, input.projectId)}
               WHERE ${seriesConditions({ ...input, event: null }, params).join(' AND ')} AND ${kind}
               GROUP BY person))
          WHERE length(path) > 0`;
}

export type PathEdge = { source: string; target: string; persons: number };

/** Edges between consecutive items: persons per (`<i>_<item>`, `<i+1>_<item>`), most first. */
export async function pathEdges(
  ch: ClickHouse,
  input: PathInput,
  limit: number,
): Promise<PathEdge[]> {
  const params = new Params();
  const rows = await runEventsQuery<{ source: string; target: string; persons: number }[]>(
    ch,
    `SELECT edge.1 AS source, edge.2 AS target, uniqExact(person) AS persons
       FROM (${paths(ch, input, params)})
      ARRAY JOIN arrayMap(i -> (concat(toString(i), '_', path[i]), concat(toString(i + 1), '_', path[i + 1])),
                          range(1, toUInt64(length(path)))) AS edge
      GROUP BY source, target ORDER BY persons DESC, source, target LIMIT ${params.number(limit)}`,
    params,
    'JSONEachRow',
  );
  return rows.map((r) => ({ ...r, persons: Number(r.persons) }));
}

/** `1_/home` → [1, '/home'], or null when the key is not `<step>_<item>`. */
export function parseStepKey(key: string): { step: number; item: string } | null {
  const m = /^(\d{1,3})_(.*)$/s.exec(key);
  return m ? { step: Number(m[1]), item: m[2]! } : null;
}

/**
 * The persons whose path goes from `start` to `end` (both step keys, consecutive), or whose path
 * ends at `dropoff` (they went no further).
 */
export async function pathActors(
  ch: ClickHouse,
  input: PathInput,
  selection: { start?: string; end?: string; dropoff?: string },
  limit: number,
  offset: number,
): Promise<{ personUuids: string[]; hasMore: boolean }> {
  const params = new Params();
  const where: string[] = [];
  const at = (key: string) => {
    const k = parseStepKey(key)!;
    return `path[${params.number(k.step)}] = ${params.string(k.item)}`;
  };
  if (selection.start) where.push(at(selection.start));
  if (selection.end) where.push(at(selection.end));
  if (selection.dropoff) {
    where.push(at(selection.dropoff));
    where.push(`length(path) = ${params.number(parseStepKey(selection.dropoff)!.step)}`);
  }
  const rows = await runEventsQuery<{ person: string }[]>(
    ch,
    `SELECT person FROM (${paths(ch, input, params)})
      WHERE ${where.length ? where.join(' AND ') : '1'}
      ORDER BY person LIMIT ${params.number(limit + 1)} OFFSET ${params.number(offset)}`,
    params,
    'JSONEachRow',
  );
  return { personUuids: rows.slice(0, limit).map((r) => r.person), hasMore: rows.length > limit };
}
