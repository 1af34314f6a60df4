import type { PostgresInClickHouse } from '../../src/runtime/postgresInClickHouse.ts';
import { HogQLError } from './errors.ts';
import {
  PDI_DISTINCT_ID,
  PERSON_CREATED_AT,
  PERSON_ID,
  PERSON_IS_IDENTIFIED,
  PERSON_PROPERTIES,
  type TableName,
} from './schema.ts';

/**
 * The Postgres read models as ClickHouse reads them, through the `postgresql()` table function
 * (as src/processing/logInClickHouse.ts reads the event log).
 */
export {
  type PostgresInClickHouse,
  postgresInClickHouse,
} from '../../src/runtime/postgresInClickHouse.ts';

/** Which lazy joins a table reference needs, found while its fields are printed. */
export type Needs = { personId: boolean; person: boolean; pdi: boolean };

export type SourceContext = Readonly<{
  database: string;
  projectId: number;
  postgres: PostgresInClickHouse | undefined;
}>;

/**
 * Each table a query names is printed as a subquery of this project's rows only: the project
 * guard is structural, since no other spelling of a table reaches ClickHouse (raw names, other
 * databases and table functions are refused by the printer).
 */
export function tableSource(ctx: SourceContext, table: TableName, needs: Needs): string {
  const p = ctx.projectId;
  const db = ctx.database;
  const pg = (name: string) => {
    if (!ctx.postgres)
      throw new HogQLError(
        `The ${table === 'events' ? 'person' : table} table is not available here`,
      );
    return ctx.postgres.table(name);
  };
  const persons = () =>
    `SELECT uuid AS id, created_at, properties, is_identified, uuid AS ${PERSON_ID} FROM ${pg('persons')} WHERE project_id = ${p}`;
  // PostHog's person_distinct_id2: the newest row of each distinct id, unless it was deleted
  const pdi = `SELECT distinct_id, argMax(person_id, version) AS person_id FROM ${db}.person_distinct_id WHERE team_id = ${p} GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0`;
  const withPerson = (inner: string) =>
    needs.person
      ? `SELECT __t.*, __p.properties AS ${PERSON_PROPERTIES}, __p.created_at AS ${PERSON_CREATED_AT}, __p.is_identified AS ${PERSON_IS_IDENTIFIED} FROM (${inner}) AS __t LEFT JOIN (${persons()}) AS __p ON __p.id = __t.${PERSON_ID}`
      : inner;
  switch (table) {
    case 'events':
      if (!needs.personId && !needs.person)
        return `SELECT * FROM ${db}.events WHERE team_id = ${p}`;
      // the person of the distinct id now (after merges), else the one at capture time
      return withPerson(
        `SELECT __e.*, if(__pdi.distinct_id = '', __e.person_id, __pdi.person_id) AS ${PERSON_ID} FROM ${db}.events AS __e LEFT JOIN (${pdi}) AS __pdi ON __pdi.distinct_id = __e.distinct_id WHERE __e.team_id = ${p}`,
      );
    case 'person_distinct_ids':
      return withPerson(`SELECT distinct_id, person_id, person_id AS ${PERSON_ID} FROM (${pdi})`);
    case 'persons':
      return needs.pdi
        ? `SELECT __t.*, __d.distinct_id AS ${PDI_DISTINCT_ID} FROM (${persons()}) AS __t LEFT JOIN (${pdi}) AS __d ON __d.person_id = __t.id`
        : persons();
    case 'groups':
      return `SELECT group_type_index AS index, group_key AS key, created_at, properties FROM ${pg('groups')} WHERE project_id = ${p}`;
    case 'cohort_people':
      return withPerson(
        `SELECT person_uuid AS person_id, cohort_id, person_uuid AS ${PERSON_ID} FROM ${pg('cohort_people')} WHERE cohort_id IN (SELECT id FROM ${pg('cohorts')} WHERE project_id = ${p})`,
      );
  }
}
