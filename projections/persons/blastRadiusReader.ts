import type pg from 'pg';
import { compilePersonFilters, PgParams } from './personFilters.ts';
import { checkRegexes } from './personsReader.ts';

/** How many of a population meet the filters, out of how many. */
export type BlastRadius = { affected: number; total: number };

/**
 * Counts for a flag condition's blast radius over the persons read model (`persons`, `groups`):
 * one statement each, bounded by the pool's statement timeout. `filters` are person-property
 * filters (personFilters.ts); for groups they are read over the group's properties, with
 * `$group_key` standing for the group key. Throws FilterError for a bad filter or regex.
 */
export const blastRadiusReader = (pool: pg.Pool) => ({
  async persons(projectId: number, filters: readonly unknown[], now: Date): Promise<BlastRadius> {
    const params = new PgParams();
    const project = params.add(projectId, 'int');
    const compiled = compilePersonFilters(filters, params, now, 'p.properties');
    if (compiled) await checkRegexes(pool, compiled.regexes);
    const meeting = compiled ? `COALESCE((${compiled.sql}), false)` : 'true';
    const { rows } = await pool.query<{ affected: string; total: string }>(
      `SELECT count(*) FILTER (WHERE ${meeting}) AS affected, count(*) AS total
         FROM persons p WHERE p.project_id = ${project}`,
      params.values,
    );
    return { affected: Number(rows[0]!.affected), total: Number(rows[0]!.total) };
  },

  async groups(
    projectId: number,
    groupTypeIndex: number,
    filters: readonly unknown[],
    now: Date,
  ): Promise<BlastRadius> {
    const params = new PgParams();
    const project = params.add(projectId, 'int');
    const index = params.add(groupTypeIndex, 'int');
    const column = `(g.properties || jsonb_build_object('$group_key', g.group_key))`;
    const compiled = compilePersonFilters(filters, params, now, column);
    if (compiled) await checkRegexes(pool, compiled.regexes);
    const meeting = compiled ? `COALESCE((${compiled.sql}), false)` : 'true';
    const { rows } = await pool.query<{ affected: string; total: string }>(
      `SELECT count(*) FILTER (WHERE ${meeting}) AS affected, count(*) AS total
         FROM groups g WHERE g.project_id = ${project} AND g.group_type_index = ${index}`,
      params.values,
    );
    return { affected: Number(rows[0]!.affected), total: Number(rows[0]!.total) };
  },
});
