import type pg from 'pg';
import { cohortsReader } from '../../projections/cohorts/cohortsReader.ts';
import { fail, validation } from '../../src/core/errors.ts';

/**
 * The cohort ids a filter names: every `{type: "cohort", value}` at any depth of a cohort's
 * property groups or a flag's condition groups.
 */
export function cohortIdsIn(filter: unknown): unknown[] {
  if (Array.isArray(filter)) return filter.flatMap(cohortIdsIn);
  if (filter === null || typeof filter !== 'object') return [];
  const o = filter as Record<string, unknown>;
  const own = o.type === 'cohort' && 'value' in o ? [o.value] : [];
  return [...own, ...Object.values(o).flatMap(cohortIdsIn)];
}

const asCohortId = (value: unknown): number | null => {
  const n = typeof value === 'string' && /^\d{1,10}$/.test(value.trim()) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 && n <= 2147483647 ? n : null;
};

/**
 * Fails with PostHog's 400 (`cohort_does_not_exist` on `filters`) when a filter names a cohort
 * that is not the project's: another project's id would be accepted and then never evaluate.
 * The project's soft-deleted cohorts are allowed, as PostHog allows them (a flag on one is
 * reported by `/decide` like a cohort deleted later).
 */
export async function assertCohortsOfProject(
  pool: pg.Pool,
  projectId: number,
  filter: unknown,
): Promise<void> {
  const named = [...new Set(cohortIdsIn(filter).map(String))];
  if (named.length === 0) return;
  const ids = named.map((v) => asCohortId(v));
  const found = await cohortsReader(pool).ofProject(
    projectId,
    ids.filter((id) => id !== null),
  );
  const missing = named.find((_, i) => ids[i] === null || !found.has(ids[i]!));
  if (missing !== undefined)
    fail(
      validation(
        'cohort_does_not_exist',
        `Cohort with id ${missing} does not exist in this project.`,
        'filters',
      ),
    );
}
