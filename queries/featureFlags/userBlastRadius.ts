import { z } from 'zod';
import type { BlastRadius } from '../../projections/persons/blastRadiusReader.ts';
import { MAX_FILTERS } from '../../projections/shared/propertyFilterTree.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';

export const BlastRadiusBody = z.object({
  condition: z.object({
    properties: z
      .array(z.record(z.string(), z.unknown()))
      .max(MAX_FILTERS)
      .nullish()
      .describe("the release condition's property filters (all must hold)"),
    rollout_percentage: z
      .number()
      .min(0)
      .max(100)
      .nullish()
      .describe('accepted and not applied: the count is of everyone the properties match'),
  }),
  group_type_index: z
    .number()
    .int()
    .min(0)
    .max(4)
    .nullish()
    .describe('count groups of this type instead of persons'),
});
export type BlastRadiusBody = z.infer<typeof BlastRadiusBody>;

export const BlastRadiusAnswer = z.object({
  users_affected: z.number().int(),
  total_users: z.number().int(),
});

export type BlastRadiusCounts = Readonly<{
  persons(projectId: number, filters: readonly unknown[], now: Date): Promise<BlastRadius>;
  groups(
    projectId: number,
    groupTypeIndex: number,
    filters: readonly unknown[],
    now: Date,
  ): Promise<BlastRadius>;
}>;

const notYet = () =>
  fail(
    invalidInput(
      'Cohort filters are not supported in the blast radius yet (no cohort membership read model).',
      'condition',
    ),
  );

/**
 * The filters of a person condition, as person filters: cohorts are refused until cohort
 * membership is a read model the count can join, and a group filter needs `group_type_index`
 * (PostHog's person count has no groups to read).
 */
function personFilters(properties: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return properties.map((p) => {
    if (p.type === 'cohort') return notYet();
    if (p.type !== undefined && p.type !== null && p.type !== 'person')
      fail(
        invalidInput(
          `Only person properties can count persons (got type ${JSON.stringify(p.type)}); pass group_type_index for group properties.`,
          'condition',
        ),
      );
    return { ...p, type: 'person' };
  });
}

/**
 * The filters of a group condition, read as filters over that group's properties. As in
 * PostHog, each must name the same group type, except `$group_key` (the key itself).
 */
function groupFilters(
  properties: readonly Record<string, unknown>[],
  groupTypeIndex: number,
): Record<string, unknown>[] {
  return properties.map((p) => {
    if (p.type === 'cohort') return notYet();
    if (p.key !== '$group_key' && (p.type !== 'group' || p.group_type_index !== groupTypeIndex))
      fail(invalidInput('Invalid group type index for feature flag condition.', 'condition'));
    return { ...p, type: 'person' };
  });
}

/**
 * How many persons (or groups of `group_type_index`) the condition's properties match, out of
 * all of them. The rollout percentage is not applied, as in PostHog: there is no flag key to hash
 * yet, and the UI scales the count itself (docs/DECISIONS.md).
 */
export async function userBlastRadius(
  counts: BlastRadiusCounts,
  projectId: number,
  body: BlastRadiusBody,
  now: Date,
): Promise<z.infer<typeof BlastRadiusAnswer>> {
  const properties = body.condition.properties ?? [];
  const index = body.group_type_index;
  const radius =
    index === null || index === undefined
      ? await counts.persons(projectId, personFilters(properties), now)
      : await counts.groups(projectId, index, groupFilters(properties, index), now);
  return { users_affected: radius.affected, total_users: radius.total };
}
