import { z } from 'zod';
import { hogqlString, propertyFiltersHogQL } from '../../projections/hogql/propertyFiltersHogQL.ts';
import { personsReader } from '../../projections/persons/personsReader.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
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
 * ActorsQuery over persons (PostHog's persons table in the app; PersonsNode, its older form, is
 * answered the same way): conditions and paging run as HogQL over `persons`, then the `person`
 * column is filled from the persons read model, as PostHog's actors_query_runner reads the actors
 * it found from Postgres.
 */

const ActorsQuery = z.looseObject({
  kind: z.enum(['ActorsQuery', 'PersonsNode']),
  select: Expressions.min(1).optional(),
  search: z.string().max(1_000).nullable().optional(),
  properties: z.unknown().optional(),
  fixedProperties: z.unknown().optional(),
  orderBy: Expressions.optional(),
  cohort: z.number().int().min(0).nullable().optional(),
  distinctId: z.string().nullable().optional(),
  source: z.null('ActorsQuery with a source (insight actors) is not supported here').optional(),
  limit: Limit,
  offset: Offset,
});

/** PostHog's PersonStrategy.input_columns, without `person.$delete` (no delete action here). */
const DEFAULT_SELECT = ['person', 'id', 'created_at'];

/** PostHog's person search: email or name containing it, the person's id, or one of its distinct ids. */
function searchCondition(search: string): string {
  const like = hogqlString(`%${search}%`);
  const exact = hogqlString(search);
  return `(toString(properties.email) ILIKE ${like} OR toString(properties.name) ILIKE ${like} OR toString(id) = ${exact} OR id IN (SELECT person_id FROM person_distinct_ids WHERE distinct_id = ${exact}))`;
}

export async function runActorsQuery(deps: QueryDeps, run: QueryRun, raw: unknown) {
  const q = parseKind(ActorsQuery, raw);
  const columns = q.select ?? DEFAULT_SELECT;
  const personColumn = columns.indexOf('person');
  const printed = columns.map((c) => (c === 'person' ? 'id' : c));
  const where: string[] = [];
  if (q.search?.trim()) where.push(searchCondition(q.search.trim()));
  for (const filters of [q.properties, q.fixedProperties]) {
    const condition = propertyFiltersHogQL(filters, 'persons');
    if (condition) where.push(condition);
  }
  if (q.cohort !== undefined && q.cohort !== null)
    where.push(`id IN (SELECT person_id FROM cohort_people WHERE cohort_id = ${q.cohort})`);
  if (q.distinctId)
    where.push(
      `id IN (SELECT person_id FROM person_distinct_ids WHERE distinct_id = ${hogqlString(q.distinctId)})`,
    );
  // newest first, as PostHog's persons list; id breaks ties so pages never overlap
  const orderBy = q.orderBy ?? ['created_at DESC', 'id DESC'];
  if (orderBy.some((o) => o.trim() === 'person'))
    fail(invalidInput('query.orderBy: order by a field of the person, e.g. created_at', 'query'));
  const query = selectHogQL({ select: printed, from: 'persons', where, orderBy });
  const result = await runKindHogQL(deps, run, { query }, q);
  let results = result.results;
  let missing = 0;
  if (personColumn >= 0) {
    const ids = results.map((r) => String(r[personColumn]));
    const found = await personsReader(deps.ctx.pool).personsByUuids(run.projectId, ids);
    const byUuid = new Map(found.map((p) => [p.uuid, p]));
    missing = ids.filter((id) => !byUuid.has(id)).length;
    results = results.map((row) => {
      const p = byUuid.get(String(row[personColumn]));
      const out = [...row];
      out[personColumn] = p
        ? {
            id: p.uuid,
            uuid: p.uuid,
            distinct_ids: p.distinct_ids,
            properties: p.properties,
            is_identified: p.is_identified,
            created_at: p.created_at.toISOString(),
          }
        : { id: row[personColumn] };
      return out;
    });
  }
  return {
    ...freshness(run.now),
    columns,
    types: result.types.map(([, type]) => type),
    results,
    hogql: result.hogql,
    hasMore: result.hasMore,
    limit: result.limit,
    offset: result.offset,
    missing_actors_count: missing,
  };
}
