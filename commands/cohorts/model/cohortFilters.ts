import { z } from 'zod';
import type { PropertyGroup } from './cohort.ts';

/**
 * A cohort's property filter, as PostHog stores dynamic cohorts: nested AND/OR groups of person
 * properties (the operators of flags.md) and references to other cohorts. Behavioural filters
 * (`type: "behavioral"`) need event counts per person and are refused until that exists.
 */
const CohortProperty = z
  .object({
    key: z.union([z.string().min(1).max(400), z.number()]),
    type: z.enum(['person', 'cohort'], {
      error: 'type must be "person" or "cohort" (behavioural cohorts are not supported yet)',
    }),
    value: z.unknown().optional(),
    operator: z.string().max(40).nullable().optional(),
    negation: z.boolean().optional(),
  })
  .catchall(z.unknown());

export const CohortPropertyGroup: z.ZodType<PropertyGroup> = z.lazy(() =>
  z.object({
    type: z.enum(['AND', 'OR']),
    values: z.array(z.union([CohortPropertyGroup, CohortProperty])).max(100),
  }),
);

export const CohortFiltersInput = z
  .object({ properties: CohortPropertyGroup })
  .describe('`{properties: {type: "AND" | "OR", values: [property or group, …]}}`');
