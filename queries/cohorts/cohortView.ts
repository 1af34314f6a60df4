import { z } from 'zod';
import type { CohortRow } from '../../projections/cohorts/cohortsReader.ts';

/**
 * PostHog's cohort shape. A static cohort counts its persons; a dynamic one the persons of its
 * last calculation (`count` null before the first), `is_calculating` while one runs.
 */
export const CohortView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    groups: z.array(z.unknown()).describe('legacy condition groups: always empty here'),
    filters: z.object({ properties: z.unknown() }),
    query: z.null(),
    is_static: z.boolean(),
    is_calculating: z.boolean(),
    last_calculation: z.string().nullable(),
    errors_calculating: z.number().int(),
    count: z.number().int().nullable(),
    created_by_id: z.number().int().nullable(),
    created_at: z.string(),
    deleted: z.boolean(),
    version: z.number().int(),
  })
  .meta({ id: 'Cohort' });
export type CohortView = z.infer<typeof CohortView>;

export const toCohortView = (row: CohortRow): CohortView => ({
  id: row.id,
  name: row.name,
  description: row.description,
  groups: [],
  filters: row.filters,
  query: null,
  is_static: row.is_static,
  is_calculating: row.is_calculating,
  last_calculation: row.last_calculation ? new Date(row.last_calculation).toISOString() : null,
  errors_calculating: row.errors_calculating,
  count: row.count,
  created_by_id: row.created_by_user_id,
  created_at: new Date(row.created_at).toISOString(),
  deleted: row.deleted,
  version: row.version,
});
