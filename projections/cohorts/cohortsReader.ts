import type pg from 'pg';
import type { PropertyGroup } from '../../commands/cohorts/model/cohort.ts';

export type CohortRow = {
  id: number;
  project_id: number;
  name: string;
  description: string;
  filters: { properties: PropertyGroup };
  deleted: boolean;
  created_at: Date;
  created_by_user_id: number | null;
  version: number;
  is_static: boolean;
  is_calculating: boolean;
  last_calculation: Date | null;
  errors_calculating: number;
  /** persons of a static cohort, or of a dynamic one as last calculated; null before that */
  count: number | null;
};

const SELECT_COHORT = `SELECT c.*, CASE WHEN c.is_static OR c.last_calculation IS NOT NULL
    THEN (SELECT count(*)::int FROM cohort_people cp WHERE cp.cohort_id = c.id) END AS count
  FROM cohorts c`;

const isDbInteger = (n: number) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647;

/** The only reader of the `cohorts` read model. */
export const cohortsReader = (pool: pg.Pool) => ({
  /** A page of the project's live cohorts, newest first (soft-deleted ones are hidden). */
  async list(
    projectId: number,
    page: { limit: number; offset: number },
  ): Promise<{ count: number; rows: CohortRow[] }> {
    const [count, rows] = await Promise.all([
      pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM cohorts WHERE project_id = $1 AND NOT deleted',
        [projectId],
      ),
      pool.query<CohortRow>(
        `${SELECT_COHORT} WHERE c.project_id = $1 AND NOT c.deleted
          ORDER BY c.created_at DESC, c.id DESC LIMIT $2 OFFSET $3`,
        [projectId, page.limit, page.offset],
      ),
    ]);
    return { count: Number(count.rows[0]!.n), rows: rows.rows };
  },

  /** One cohort; a soft-deleted one only with `includeDeleted` (the answer to the deleting PATCH). */
  async get(projectId: number, id: number, includeDeleted = false): Promise<CohortRow | undefined> {
    if (!isDbInteger(id)) return undefined;
    const { rows } = await pool.query<CohortRow>(
      `${SELECT_COHORT} WHERE c.project_id = $1 AND c.id = $2 AND (NOT c.deleted OR $3)`,
      [projectId, id, includeDeleted],
    );
    return rows[0];
  },

  /** Every live cohort of the project, oldest first (at most `limit`). */
  async all(projectId: number, limit = 10_000): Promise<CohortRow[]> {
    const { rows } = await pool.query<CohortRow>(
      `${SELECT_COHORT} WHERE c.project_id = $1 AND NOT c.deleted ORDER BY c.id LIMIT $2`,
      [projectId, limit],
    );
    return rows;
  },

  /** The static cohorts (of `cohortIds`) that hold this person. */
  async staticCohortsOf(personUuid: string, cohortIds: readonly number[]): Promise<number[]> {
    if (cohortIds.length === 0) return [];
    const { rows } = await pool.query<{ cohort_id: number }>(
      'SELECT cohort_id FROM cohort_people WHERE person_uuid = $1 AND cohort_id = ANY($2::int[])',
      [personUuid, cohortIds],
    );
    return rows.map((r) => r.cohort_id);
  },

  /** The persons (uuids) a cohort holds: a static one's, or a dynamic one's last calculation. */
  async members(cohortId: number): Promise<string[]> {
    const { rows } = await pool.query<{ u: string }>(
      'SELECT person_uuid::text AS u FROM cohort_people WHERE cohort_id = $1',
      [cohortId],
    );
    return rows.map((r) => r.u);
  },

  /**
   * Live dynamic cohorts never calculated, or last calculated before `before`, oldest first (one
   * left calculating by a crash is due again too).
   */
  async dueForCalculation(
    before: Date,
    limit = 100,
  ): Promise<{ id: number; project_id: number }[]> {
    const { rows } = await pool.query<{ id: number; project_id: number }>(
      `SELECT id, project_id FROM cohorts
        WHERE NOT deleted AND NOT is_static
          AND (last_calculation IS NULL OR last_calculation < $1)
        ORDER BY last_calculation NULLS FIRST, id LIMIT $2`,
      [before, limit],
    );
    return rows;
  },

  /** Which of these ids are the project's cohorts (soft-deleted ones included). */
  async ofProject(projectId: number, ids: readonly number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const { rows } = await pool.query<{ id: number }>(
      'SELECT id FROM cohorts WHERE project_id = $1 AND id = ANY($2::int[])',
      [projectId, ids],
    );
    return new Set(rows.map((r) => r.id));
  },

  /**
   * Live dynamic cohorts a calculation was left running on (`CohortCalculationStarted` without
   * its `CohortCalculated`): at start, by a process that is gone.
   */
  async interruptedCalculations(): Promise<{ id: number; project_id: number }[]> {
    const { rows } = await pool.query<{ id: number; project_id: number }>(
      `SELECT id, project_id FROM cohorts
        WHERE is_calculating AND NOT deleted AND NOT is_static ORDER BY id`,
    );
    return rows;
  },

  /** The ids of the project's live static cohorts. */
  async staticIds(projectId: number): Promise<string[]> {
    const { rows } = await pool.query<{ id: number }>(
      'SELECT id FROM cohorts WHERE project_id = $1 AND NOT deleted AND is_static ORDER BY id',
      [projectId],
    );
    return rows.map((r) => String(r.id));
  },

  /**
   * Live dynamic cohort definitions by id, in the local-evaluation `cohorts` shape (static
   * cohorts have no definition to send, as in PostHog).
   */
  async definitions(projectId: number): Promise<Record<string, PropertyGroup>> {
    const { rows } = await pool.query<{ id: number; filters: { properties: PropertyGroup } }>(
      'SELECT id, filters FROM cohorts WHERE project_id = $1 AND NOT deleted AND NOT is_static ORDER BY id',
      [projectId],
    );
    return Object.fromEntries(rows.map((r) => [String(r.id), r.filters.properties]));
  },
});
export type CohortsReader = ReturnType<typeof cohortsReader>;
