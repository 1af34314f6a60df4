import type pg from 'pg';
import { isStorable, type PersonRef } from '../../commands/persons/model/personRef.ts';
import type { PersonRecord } from '../../commands/persons/model/personView.ts';
import { isUuid } from '../../src/core/uuid.ts';
import { checkpointId, readCheckpoint } from '../../src/processing/projection.ts';
import { escapeLike, FilterError } from '../shared/propertyFilterTree.ts';
import { compilePersonFilters, type PersonWhere, PgParams } from './personFilters.ts';
import { personsProjection } from './personsProjection.ts';

/**
 * The only reader of the persons read model's tables (`persons`, `person_distinct_ids`,
 * `group_type_mapping`; the projection alone writes them). Person commands read their facts here,
 * the persons and events queries their answers, the events projection its group type indexes.
 */
export type PersonsReader = ReturnType<typeof personsReader>;

/** A pool or a checked-out client (the CSV export reads one snapshot through a client). */
type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** A person as flag evaluation reads it: stored properties, and every distinct id (continuity). */
export type PersonForFlags = {
  uuid: string;
  properties: Record<string, unknown>;
  distinctIds: string[];
};

/** The `person` of an event in the events REST list (capture.md §4.2). */
export type PersonSummary = {
  is_identified: boolean;
  /** the person's first distinct id only (oldest attached), as PostHog sends */
  distinct_ids: string[];
  /** only `email`, `name` and `username`, those the person has */
  properties: Record<string, unknown>;
};
const SUMMARY_KEYS = ['email', 'name', 'username'] as const;

/** One REPEATABLE READ snapshot on a connection of its own: every read sees the same persons. */
export type PersonsSnapshot = Readonly<{
  checkRegexes(regexes: readonly string[]): Promise<void>;
  propertyKeys(where: PersonWhere, limit: number, offset: number): Promise<string[]>;
  page(where: PersonWhere, limit: number, offset: number): Promise<PersonRecord[]>;
  /** commits (true) or rolls back, and gives the connection back; never throws */
  end(commit: boolean): Promise<void>;
}>;

/** A person the projection ever created (`person_identities`), live or merged away or deleted since. */
export type PersonIdentity = Readonly<{
  id: number;
  uuid: string;
  /** the distinct id it was created for */
  distinctId: string;
  /** log position of the event that created it */
  position: bigint;
}>;

type IdentityRow = { id: number; uuid: string; distinct_id: string; position: string };
const toIdentity = (r: IdentityRow): PersonIdentity => ({
  id: r.id,
  uuid: r.uuid,
  distinctId: r.distinct_id,
  position: BigInt(r.position),
});
const SELECT_IDENTITY =
  'SELECT id, uuid::text AS uuid, distinct_id, position FROM person_identities';

const SELECT_PERSON = `SELECT p.id, p.uuid::text AS uuid, p.properties, p.is_identified, p.created_at,
    COALESCE((SELECT array_agg(d.distinct_id ORDER BY d.ord) FROM person_distinct_ids d WHERE d.person_id = p.id), '{}') AS distinct_ids
  FROM persons p`;

/** Refuses a pattern Postgres cannot compile, before it can fail the statement (400, not 500). */
export async function checkRegexes(db: Queryable, regexes: readonly string[]): Promise<void> {
  for (const pattern of regexes) {
    try {
      await db.query(`SELECT '' ~ $1::text AS ok`, [pattern]);
    } catch (error) {
      if ((error as { code?: string }).code === '2201B')
        throw new FilterError(
          `properties: invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}`,
        );
      throw error;
    }
  }
}

/** One page of the list, newest created_at first, then id descending. */
async function personPage(
  db: Queryable,
  where: PersonWhere,
  limit: number,
  offset: number,
): Promise<PersonRecord[]> {
  const values = [...where.params.values, limit, offset];
  const n = where.params.values.length;
  const { rows } = await db.query<PersonRecord>(
    `${SELECT_PERSON} WHERE ${where.sql} ORDER BY p.created_at DESC, p.id DESC LIMIT $${n + 1}::int OFFSET $${n + 2}::int`,
    values,
  );
  return rows;
}

async function countPersons(db: Queryable, where: PersonWhere): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM persons p WHERE ${where.sql}`,
    where.params.values,
  );
  return Number(rows[0]!.n);
}

/** Sorted property keys of the persons on one page range (the CSV's `properties.<key>` columns). */
async function propertyKeys(
  db: Queryable,
  where: PersonWhere,
  limit: number,
  offset: number,
): Promise<string[]> {
  const n = where.params.values.length;
  const { rows } = await db.query<{ key: string }>(
    `SELECT DISTINCT k.key COLLATE "C" AS key FROM (SELECT p.properties FROM persons p WHERE ${where.sql}
        ORDER BY p.created_at DESC, p.id DESC LIMIT $${n + 1}::int OFFSET $${n + 2}::int) s, jsonb_object_keys(s.properties) AS k(key)
      ORDER BY 1`,
    [...where.params.values, limit, offset],
  );
  return rows.map((r) => r.key);
}

export const personsReader = (pool: pg.Pool) => ({
  /** A person by integer id or uuid (a uuid shared after a split: the oldest person). */
  async getPerson(projectId: number, ref: PersonRef): Promise<PersonRecord | null> {
    if (!isStorable(ref)) return null;
    const { rows } = await pool.query<PersonRecord>(
      ref.kind === 'id'
        ? `${SELECT_PERSON} WHERE p.project_id = $1::int AND p.id = $2::int`
        : `${SELECT_PERSON} WHERE p.project_id = $1::int AND p.uuid = $2::uuid ORDER BY p.id LIMIT 1`,
      [projectId, ref.kind === 'id' ? ref.id : ref.uuid],
    );
    return rows[0] ?? null;
  },

  /** Persons by uuid (the ids `/query`'s actors rows carry), at most one per uuid (the oldest after a split). */
  async personsByUuids(projectId: number, uuids: readonly string[]): Promise<PersonRecord[]> {
    const wanted = [...new Set(uuids)].filter(isUuid);
    if (wanted.length === 0) return [];
    const { rows } = await pool.query<PersonRecord>(
      `SELECT DISTINCT ON (p.uuid) * FROM (${SELECT_PERSON} WHERE p.project_id = $1::int AND p.uuid = ANY($2::uuid[])) p ORDER BY p.uuid, p.id`,
      [projectId, wanted],
    );
    return rows;
  },

  /** The persons list (`personWhere`): the count of all matches and one page. */
  async listPersons(
    where: PersonWhere,
    page: { limit: number; offset: number },
  ): Promise<{ count: number; results: PersonRecord[] }> {
    await checkRegexes(pool, where.regexes);
    const [count, results] = await Promise.all([
      countPersons(pool, where),
      personPage(pool, where, page.limit, page.offset),
    ]);
    return { count, results };
  },

  /** A consistent view for a long read (the CSV export); the caller must `end` it. */
  async snapshot(): Promise<PersonsSnapshot> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release();
      throw error;
    }
    return {
      checkRegexes: (regexes) => checkRegexes(client, regexes),
      propertyKeys: (where, limit, offset) => propertyKeys(client, where, limit, offset),
      page: (where, limit, offset) => personPage(client, where, limit, offset),
      async end(commit) {
        await client.query(commit ? 'COMMIT' : 'ROLLBACK').catch(() => undefined);
        client.release();
      },
    };
  },

  /**
   * persons/values/: the values one person property takes, as text (JSON strings unquoted, other
   * values as JSON), most frequent first, optionally only those containing `value` (case-insensitive).
   */
  async propertyValues(
    projectId: number,
    key: string,
    value: string | undefined,
    limit: number,
  ): Promise<{ name: string; count: number }[]> {
    const params = new PgParams();
    const project = params.add(projectId, 'int');
    const prop = `p.properties ->> ${params.add(key, 'text')}`;
    const contains =
      value !== undefined && value !== ''
        ? `AND ${prop} ILIKE ${params.add(`%${escapeLike(value)}%`, 'text')}`
        : '';
    const { rows } = await pool.query<{ name: string; count: string }>(
      `SELECT ${prop} AS name, count(*) AS count FROM persons p
        WHERE p.project_id = ${project} AND ${prop} IS NOT NULL ${contains}
        GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT ${params.add(limit, 'int')}`,
      params.values,
    );
    return rows.map((r) => ({ name: r.name, count: Number(r.count) }));
  },

  /** PostHog's groups_types list: types in index order. */
  async groupTypes(projectId: number): Promise<{ group_type: string; group_type_index: number }[]> {
    const { rows } = await pool.query<{ group_type: string; group_type_index: number }>(
      'SELECT group_type, group_type_index FROM group_type_mapping WHERE project_id = $1::int ORDER BY group_type_index',
      [projectId],
    );
    return rows;
  },

  /** projectId → group type → index, for the given projects. */
  async groupTypeIndexes(projectIds: readonly number[]): Promise<Map<number, Map<string, number>>> {
    const { rows } = await pool.query<{
      project_id: number;
      group_type: string;
      group_type_index: number;
    }>(
      'SELECT project_id, group_type, group_type_index FROM group_type_mapping WHERE project_id = ANY($1::int[])',
      [projectIds],
    );
    const out = new Map<number, Map<string, number>>();
    for (const r of rows) {
      const m = out.get(r.project_id) ?? new Map<string, number>();
      m.set(r.group_type, r.group_type_index);
      out.set(r.project_id, m);
    }
    return out;
  },

  /**
   * The persons of `distinctIds` in one project: a map from each distinct id that has a person to
   * that person's summary. Distinct ids without a person (unknown, personless, or of a deleted
   * person) are absent: the events list shows `person: null` for them.
   */
  async summariesForDistinctIds(
    projectId: number,
    distinctIds: readonly string[],
  ): Promise<Map<string, PersonSummary>> {
    const out = new Map<string, PersonSummary>();
    const wanted = [...new Set(distinctIds)];
    if (wanted.length === 0) return out;
    const { rows } = await pool.query<{
      distinct_id: string;
      is_identified: boolean;
      properties: Record<string, unknown>;
      first_id: string;
    }>(
      `SELECT m.distinct_id, p.is_identified, p.properties,
              (SELECT d.distinct_id FROM person_distinct_ids d WHERE d.person_id = p.id ORDER BY d.ord LIMIT 1) AS first_id
         FROM person_distinct_ids m JOIN persons p ON p.id = m.person_id AND p.project_id = m.project_id
        WHERE m.project_id = $1::int AND m.distinct_id = ANY($2::text[])`,
      [projectId, wanted],
    );
    for (const r of rows) {
      const properties: Record<string, unknown> = {};
      for (const k of SUMMARY_KEYS) if (k in r.properties) properties[k] = r.properties[k];
      out.set(r.distinct_id, {
        is_identified: r.is_identified,
        distinct_ids: [r.first_id ?? r.distinct_id],
        properties,
      });
    }
    return out;
  },

  /**
   * Flag evaluation (/decide): the stored properties of the persons of `distinctIds` and all of
   * their distinct ids (for hash key overrides), by distinct id; absent when no person has it.
   */
  async personsForFlags(
    projectId: number,
    distinctIds: readonly string[],
  ): Promise<Map<string, PersonForFlags>> {
    const { rows } = await pool.query<{
      distinct_id: string;
      uuid: string;
      properties: Record<string, unknown>;
      ids: string[];
    }>(
      `SELECT m.distinct_id, p.uuid::text AS uuid, p.properties,
              ARRAY(SELECT d.distinct_id FROM person_distinct_ids d WHERE d.person_id = p.id ORDER BY d.ord) AS ids
         FROM person_distinct_ids m JOIN persons p ON p.id = m.person_id AND p.project_id = m.project_id
        WHERE m.project_id = $1::int AND m.distinct_id = ANY($2::text[])`,
      [projectId, distinctIds],
    );
    return new Map(
      rows.map((r) => [
        r.distinct_id,
        { uuid: r.uuid, properties: r.properties, distinctIds: r.ids },
      ]),
    );
  },

  /** Flag evaluation: stored properties of these groups, by `<index>:<key>`; unknown groups absent. */
  async groupsForFlags(
    projectId: number,
    groups: readonly { index: number; key: string }[],
  ): Promise<Map<string, Record<string, unknown>>> {
    const out = new Map<string, Record<string, unknown>>();
    if (groups.length === 0) return out;
    const { rows } = await pool.query<{
      group_type_index: number;
      group_key: string;
      properties: Record<string, unknown>;
    }>(
      `SELECT g.group_type_index, g.group_key, g.properties
         FROM groups g JOIN unnest($2::int[], $3::text[]) AS w(i, k) ON g.group_type_index = w.i AND g.group_key = w.k
        WHERE g.project_id = $1::int`,
      [projectId, groups.map((g) => g.index), groups.map((g) => g.key)],
    );
    for (const r of rows) out.set(`${r.group_type_index}:${r.group_key}`, r.properties);
    return out;
  },

  /** The person's distinct ids in attachment order; none for an unknown person. */
  async distinctIdsOf(projectId: number, ref: PersonRef): Promise<string[]> {
    if (!isStorable(ref)) return [];
    const { rows } = await pool.query<{ distinct_id: string }>(
      `SELECT d.distinct_id FROM persons p JOIN person_distinct_ids d ON d.person_id = p.id
        WHERE p.project_id = $1 AND ${ref.kind === 'id' ? 'p.id = $2::int' : 'p.uuid = $2::uuid'} ORDER BY d.ord`,
      [projectId, ref.kind === 'id' ? ref.id : ref.uuid],
    );
    return rows.map((r) => r.distinct_id);
  },

  /**
   * Time travel's index: the persons ever created in the project with this integer id or uuid
   * (several for a uuid given again after its person was deleted), oldest first.
   */
  async identitiesByRef(projectId: number, ref: PersonRef): Promise<PersonIdentity[]> {
    if (!isStorable(ref)) return [];
    const { rows } = await pool.query<IdentityRow>(
      ref.kind === 'id'
        ? `${SELECT_IDENTITY} WHERE project_id = $1::int AND id = $2::int`
        : `${SELECT_IDENTITY} WHERE project_id = $1::int AND uuid = $2::uuid ORDER BY id`,
      [projectId, ref.kind === 'id' ? ref.id : ref.uuid],
    );
    return rows.map(toIdentity);
  },

  /** The persons ever created in the project for one of these distinct ids, oldest first. */
  async identitiesCreatedFor(
    projectId: number,
    distinctIds: readonly string[],
  ): Promise<PersonIdentity[]> {
    if (distinctIds.length === 0) return [];
    const { rows } = await pool.query<IdentityRow>(
      `${SELECT_IDENTITY} WHERE project_id = $1::int AND distinct_id = ANY($2::text[]) ORDER BY id`,
      [projectId, distinctIds],
    );
    return rows.map(toIdentity);
  },

  /** Distinct ids an event ever merged (or tried to merge) with one of these, none of these. */
  async linkedDistinctIds(projectId: number, distinctIds: readonly string[]): Promise<string[]> {
    if (distinctIds.length === 0) return [];
    const { rows } = await pool.query<{ other_id: string }>(
      `SELECT DISTINCT other_id FROM person_links
        WHERE project_id = $1::int AND distinct_id = ANY($2::text[]) AND NOT (other_id = ANY($2::text[]))`,
      [projectId, distinctIds],
    );
    return rows.map((r) => r.other_id);
  },

  /** The log position up to which these tables are applied (-1n: nothing yet). */
  appliedPosition: (): Promise<bigint> => readCheckpoint(pool, checkpointId(personsProjection)),

  /**
   * Whether `person_identities` and `person_links` cover every person: false when the read model
   * was built before they existed (persons 1… have no identity) until `rebuild persons`.
   */
  async identityIndexComplete(): Promise<boolean> {
    const { rows } = await pool.query<{ first: number | null; next: string | null }>(
      `SELECT (SELECT min(id) FROM person_identities) AS first,
              (SELECT value FROM persons_counters WHERE name = 'person_id') AS next`,
    );
    const { first, next } = rows[0]!;
    return next === null || Number(next) <= 1 || first === 1;
  },

  /**
   * Whether a person without properties meets person `filters` (Postgres evaluates them on `{}`),
   * or null when the filters restrict nothing. Throws FilterError for a bad filter or regex.
   */
  async emptyPersonMatches(filters: unknown, now: Date): Promise<boolean | null> {
    const empty = new PgParams();
    const onEmpty = compilePersonFilters(filters, empty, now, `'{}'::jsonb`);
    if (!onEmpty) return null;
    await checkRegexes(pool, onEmpty.regexes);
    const {
      rows: [first],
    } = await pool.query<{ m: boolean }>(
      `SELECT COALESCE((${onEmpty.sql}), false) AS m`,
      empty.values,
    );
    return first!.m;
  },

  /**
   * Distinct ids of the project's persons that meet person `filters` (`meeting`), or that do not,
   * at most `limit`; none when the filters restrict nothing. Throws FilterError for a bad filter.
   */
  async distinctIdsByFilters(
    projectId: number,
    filters: unknown,
    now: Date,
    meeting: boolean,
    limit: number,
  ): Promise<string[]> {
    const params = new PgParams();
    const project = params.add(projectId, 'int');
    const compiled = compilePersonFilters(filters, params, now, 'p.properties');
    if (!compiled) return [];
    await checkRegexes(pool, compiled.regexes);
    const wanted = meeting
      ? `COALESCE((${compiled.sql}), false)`
      : `NOT COALESCE((${compiled.sql}), false)`;
    const { rows } = await pool.query<{ distinct_id: string }>(
      `SELECT d.distinct_id FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id AND p.project_id = d.project_id
        WHERE d.project_id = ${project} AND ${wanted} LIMIT ${params.add(limit, 'int')}`,
      params.values,
    );
    return rows.map((r) => r.distinct_id);
  },
});
