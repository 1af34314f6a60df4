import type pg from 'pg';
import { isUuid } from '../../src/core/uuid.ts';
import { isStorable, type PersonRef } from '../../commands/persons/model/personRef.ts';
import { compilePersonFilters, escapeLike, FilterError, PgParams } from './personFilters.ts';
import type { PersonRecord } from './personView.ts';

/** A pool or a checked-out client (the CSV export reads one snapshot through a client). */
export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export type PersonListInput = Readonly<{
  projectId: number;
  now: Date;
  distinctId?: string | undefined;
  email?: string | undefined;
  search?: string | undefined;
  /** the parsed `properties` parameter */
  properties?: unknown;
}>;

/** The WHERE clause of the persons list, with its parameters (persons alias `p`). */
export type PersonWhere = { sql: string; params: PgParams; regexes: string[] };

const distinctIdOwner = (params: PgParams, projectParam: string, distinctId: string) =>
  `p.id = (SELECT d.person_id FROM person_distinct_ids d WHERE d.project_id = ${projectParam} AND d.distinct_id = ${params.add(distinctId, 'text')})`;

/**
 * capture.md §4.1 filters: project, not created more than a day in the future, distinct_id (owner of
 * that id), email (exact on properties.email), search (email substring, case-insensitive, or exact
 * distinct id, or exact uuid), properties (person property filters).
 */
export function personWhere(input: PersonListInput): PersonWhere {
  const params = new PgParams();
  const project = params.add(input.projectId, 'int');
  const parts = [`p.project_id = ${project}`, `p.created_at <= ${params.add(input.now.toISOString(), 'timestamptz')} + interval '1 day'`];
  if (input.distinctId !== undefined) parts.push(distinctIdOwner(params, project, input.distinctId));
  if (input.email !== undefined) parts.push(`(p.properties ->> 'email') = ${params.add(input.email, 'text')}`);
  if (input.search !== undefined && input.search !== '') {
    const any = [
      `COALESCE((p.properties ->> 'email') ILIKE ${params.add(`%${escapeLike(input.search)}%`, 'text')}, false)`,
      distinctIdOwner(params, project, input.search),
    ];
    if (isUuid(input.search)) any.push(`p.uuid = ${params.add(input.search.toLowerCase(), 'uuid')}`);
    parts.push(`(${any.join(' OR ')})`);
  }
  const filters = compilePersonFilters(input.properties, params, input.now);
  if (filters) parts.push(filters.sql);
  return { sql: parts.join(' AND '), params, regexes: filters?.regexes ?? [] };
}

/** Refuses a pattern Postgres cannot compile, before it can fail the statement (400, not 500). */
export async function checkRegexes(db: Queryable, regexes: readonly string[]): Promise<void> {
  for (const pattern of regexes) {
    try {
      await db.query(`SELECT '' ~ $1::text AS ok`, [pattern]);
    } catch (error) {
      if ((error as { code?: string }).code === '2201B') throw new FilterError(`properties: invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}`);
      throw error;
    }
  }
}

const SELECT_PERSON = `SELECT p.id, p.uuid::text AS uuid, p.properties, p.is_identified, p.created_at,
    COALESCE((SELECT array_agg(d.distinct_id ORDER BY d.ord) FROM person_distinct_ids d WHERE d.person_id = p.id), '{}') AS distinct_ids
  FROM persons p`;

/** One page of the list, newest created_at first, then id descending. */
export async function personPage(db: Queryable, where: PersonWhere, limit: number, offset: number): Promise<PersonRecord[]> {
  const values = [...where.params.values, limit, offset];
  const n = where.params.values.length;
  const { rows } = await db.query<PersonRecord>(
    `${SELECT_PERSON} WHERE ${where.sql} ORDER BY p.created_at DESC, p.id DESC LIMIT $${n + 1}::int OFFSET $${n + 2}::int`,
    values,
  );
  return rows;
}

export async function countPersons(db: Queryable, where: PersonWhere): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM persons p WHERE ${where.sql}`, where.params.values);
  return Number(rows[0]!.n);
}

export async function listPersons(db: Queryable, input: PersonListInput, page: { limit: number; offset: number }) {
  const where = personWhere(input);
  await checkRegexes(db, where.regexes);
  const [count, results] = await Promise.all([countPersons(db, where), personPage(db, where, page.limit, page.offset)]);
  return { count, results };
}

/** Sorted property keys of the persons on one page range (the CSV's `properties.<key>` columns). */
export async function propertyKeys(db: Queryable, where: PersonWhere, limit: number, offset: number): Promise<string[]> {
  const n = where.params.values.length;
  const { rows } = await db.query<{ key: string }>(
    `SELECT DISTINCT k.key COLLATE "C" AS key FROM (SELECT p.properties FROM persons p WHERE ${where.sql}
        ORDER BY p.created_at DESC, p.id DESC LIMIT $${n + 1}::int OFFSET $${n + 2}::int) s, jsonb_object_keys(s.properties) AS k(key)
      ORDER BY 1`,
    [...where.params.values, limit, offset],
  );
  return rows.map((r) => r.key);
}



export async function getPerson(db: Queryable, projectId: number, ref: PersonRef): Promise<PersonRecord | null> {
  if (!isStorable(ref)) return null;
  const { rows } = await db.query<PersonRecord>(
    ref.kind === 'id'
      ? `${SELECT_PERSON} WHERE p.project_id = $1::int AND p.id = $2::int`
      : `${SELECT_PERSON} WHERE p.project_id = $1::int AND p.uuid = $2::uuid ORDER BY p.id LIMIT 1`,
    [projectId, ref.kind === 'id' ? ref.id : ref.uuid],
  );
  return rows[0] ?? null;
}

/**
 * persons/values/: the values one person property takes, as text (JSON strings unquoted, other
 * values as JSON), most frequent first, optionally only those containing `value` (case-insensitive).
 */
export async function personPropertyValues(db: Queryable, projectId: number, key: string, value: string | undefined, limit: number) {
  const params = new PgParams();
  const project = params.add(projectId, 'int');
  const prop = `p.properties ->> ${params.add(key, 'text')}`;
  const contains = value !== undefined && value !== '' ? `AND ${prop} ILIKE ${params.add(`%${escapeLike(value)}%`, 'text')}` : '';
  const { rows } = await db.query<{ name: string; count: string }>(
    `SELECT ${prop} AS name, count(*) AS count FROM persons p
      WHERE p.project_id = ${project} AND ${prop} IS NOT NULL ${contains}
      GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT ${params.add(limit, 'int')}`,
    params.values,
  );
  return rows.map((r) => ({ name: r.name, count: Number(r.count) }));
}

/** PostHog's groups_types list: types in index order. */
export async function groupTypes(db: Queryable, projectId: number) {
  const { rows } = await db.query<{ group_type: string; group_type_index: number }>(
    'SELECT group_type, group_type_index FROM group_type_mapping WHERE project_id = $1::int ORDER BY group_type_index',
    [projectId],
  );
  return rows;
}
