import { z } from 'zod';
import { chainToElements } from '../../commands/capture/model/elementsChain.ts';
import { parsePersonRef } from '../../commands/persons/model/personRef.ts';
import { knownFunction } from '../../projections/hogql/functions.ts';
import { parseExpr } from '../../projections/hogql/parser.ts';
import {
  dateBound,
  hogqlString,
  propertyFiltersHogQL,
} from '../../projections/hogql/propertyFiltersHogQL.ts';
import { personsReader } from '../../projections/persons/personsReader.ts';
import {
  Expressions,
  freshness,
  Limit,
  Offset,
  parseKind,
  type QueryDeps,
  type QueryRun,
  runKindHogQL,
  selectHogQL,
} from './queryRun.ts';

/**
 * EventsQuery (PostHog's events table in the app, its MCP and CLI): a select list, conditions and
 * filters built into one HogQL SELECT over `events` and run by the compiler, answered as
 * EventsQueryResponse. `*` is the event as an object and `person` the event's person, as PostHog's
 * events_query_runner fills them after the query.
 */

const EventsQuery = z.looseObject({
  kind: z.literal('EventsQuery'),
  select: Expressions.optional(),
  where: Expressions.optional(),
  orderBy: Expressions.optional(),
  event: z.string().nullable().optional(),
  after: z.string().nullable().optional(),
  before: z.string().nullable().optional(),
  personId: z.string().nullable().optional(),
  properties: z.unknown().optional(),
  fixedProperties: z.unknown().optional(),
  actionId: z.undefined('actionId is not supported by /query here; use the events list').optional(),
  limit: Limit,
  offset: Offset,
});

/** The event object `*` stands for (PostHog's SELECT_STAR_FROM_EVENTS_FIELDS, team_id added after). */
const STAR_FIELDS = [
  'uuid',
  'event',
  'properties',
  'timestamp',
  'distinct_id',
  'elements_chain',
  'created_at',
];

/** A select item without its `-- label` comment (PostHog's events table names columns so). */
const expressionOf = (column: string) => column.split(' -- ')[0]!.trim();

/** Whether an expression aggregates (outside subqueries): then the others are grouped by. */
async function aggregates(expression: string): Promise<boolean> {
  const walk = (node: unknown): boolean => {
    if (Array.isArray(node)) return node.some(walk);
    if (typeof node !== 'object' || node === null) return false;
    const n = node as Record<string, unknown>;
    if (n.node === 'SelectQuery' || n.node === 'SelectSetQuery') return false;
    if (n.node === 'Call' && typeof n.name === 'string' && knownFunction(n.name)?.aggregate)
      return true;
    return Object.values(n).some(walk);
  };
  return walk(await parseExpr(expression));
}

const parseJson = (value: unknown) => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
};

export async function runEventsQuery(deps: QueryDeps, run: QueryRun, raw: unknown) {
  const q = parseKind(EventsQuery, raw);
  // an empty select is the event itself, as PostHog's select_input_raw
  const columns = q.select?.length ? q.select : ['*'];
  const printed = columns.map((column) => {
    const expression = expressionOf(column);
    if (expression === '*') return `tuple(${STAR_FIELDS.join(', ')})`;
    if (expression === 'person') return 'tuple(distinct_id, person_id)';
    return expression;
  });
  const isAggregate = await Promise.all(
    columns.map((c, i) => (printed[i] === expressionOf(c) ? aggregates(printed[i]!) : false)),
  );
  const where: string[] = (q.where ?? []).map((w) => `(${expressionOf(w)})`);
  if (q.event) where.push(`event = ${hogqlString(q.event)}`);
  // PostHog's default window: the last 24 hours unless `after` says otherwise ("all": no bound)
  const after = dateBound(q.after ?? '-24h', 'after', run.now);
  if (after) where.push(`timestamp > toDateTime(${hogqlString(after)})`);
  const before = dateBound(q.before, 'before', run.now);
  if (before) where.push(`timestamp < toDateTime(${hogqlString(before)})`);
  for (const filters of [q.properties, q.fixedProperties]) {
    const condition = propertyFiltersHogQL(filters, 'events');
    if (condition) where.push(condition);
  }
  if (q.personId) {
    const ref = parsePersonRef(q.personId);
    const ids = ref ? await personsReader(deps.ctx.pool).distinctIdsOf(run.projectId, ref) : [];
    where.push(ids.length ? `distinct_id IN (${ids.map(hogqlString).join(', ')})` : 'false');
  }
  const grouped = isAggregate.some(Boolean);
  const groupBy = grouped ? printed.filter((_, i) => !isAggregate[i]) : [];
  // PostHog's defaults: the first aggregate, largest first; else newest first
  const firstAggregate = printed.find((_, i) => isAggregate[i]);
  const orderBy =
    q.orderBy?.map(expressionOf) ??
    (firstAggregate !== undefined ? [`${firstAggregate} DESC`] : ['timestamp DESC']);
  const query = selectHogQL({ select: printed, from: 'events', where, groupBy, orderBy });
  const result = await runKindHogQL(deps, run, { query }, q);
  const results = await withEventObjects(deps, run.projectId, columns, result.results);
  return {
    ...freshness(run.now),
    columns,
    types: result.types.map(([, type]) => type),
    results,
    hogql: result.hogql,
    hasMore: result.hasMore,
    limit: result.limit,
    offset: result.offset,
    modifiers: {},
  };
}

/** `*` cells → the event object; `person` cells → the person (from the persons read model). */
async function withEventObjects(
  deps: QueryDeps,
  projectId: number,
  columns: readonly string[],
  rows: unknown[][],
): Promise<unknown[][]> {
  const star = columns.findIndex((c) => expressionOf(c) === '*');
  const person = columns.findIndex((c) => expressionOf(c) === 'person');
  if (star < 0 && person < 0) return rows;
  const personIds = person < 0 ? [] : rows.map((r) => String((r[person] as unknown[])[1]));
  const persons = new Map(
    (await personsReader(deps.ctx.pool).personsByUuids(projectId, personIds)).map((p) => [
      p.uuid,
      p,
    ]),
  );
  return rows.map((row) => {
    const out = [...row];
    if (star >= 0) {
      const event = Object.fromEntries(STAR_FIELDS.map((f, i) => [f, (row[star] as unknown[])[i]]));
      const chain = typeof event.elements_chain === 'string' ? event.elements_chain : '';
      out[star] = {
        ...event,
        properties: parseJson(event.properties),
        team_id: projectId,
        // PostHog adds the parsed chain when there is one
        ...(chain ? { elements: chainToElements(chain) } : {}),
      };
    }
    if (person >= 0) {
      const [distinctId, personId] = row[person] as [string, string];
      const p = persons.get(String(personId));
      // PostHog's shape: the person, or only the distinct id when it has none
      out[person] = p
        ? {
            uuid: p.uuid,
            created_at: p.created_at.toISOString(),
            properties: p.properties,
            distinct_id: distinctId,
          }
        : { distinct_id: distinctId };
    }
    return out;
  });
}
