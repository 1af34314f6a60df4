import { z } from 'zod';
import { fail, invalidInput } from '../../src/core/errors.ts';
import type { CohortFilters, PropertyGroup } from './model/cohort.ts';
import { CohortFiltersInput } from './model/cohortFilters.ts';

/**
 * PostHog's deprecated cohort `groups` (still sent by scripts, the Terraform provider and its
 * older UI): a list of conditions, any of which puts a person in the cohort. Each holds person
 * `properties`, or an event the person did (`event_id`, within `days`, `count` times).
 */
const LegacyGroup = z
  .object({
    properties: z
      .union([z.array(z.record(z.string(), z.unknown())), z.record(z.string(), z.unknown())])
      .optional(),
    event_id: z.string().max(400).nullable().optional(),
    action_id: z.union([z.number(), z.string()]).nullable().optional(),
    days: z.coerce.number().int().min(1).max(3650).nullable().optional(),
    count: z.coerce.number().int().min(0).max(1_000_000).nullable().optional(),
    count_operator: z.enum(['eq', 'exact', 'gte', 'lte', 'gt', 'lt']).nullable().optional(),
    label: z.string().max(400).nullable().optional(),
  })
  .catchall(z.unknown());
export const LegacyGroups = z
  .array(LegacyGroup)
  .max(100)
  .describe(
    "deprecated (PostHog's legacy groups, any one matches): `[{properties: [...]}` or `{event_id, days, count, count_operator}]`; stored as the equivalent `filters`",
  );
type LegacyGroup = z.infer<typeof LegacyGroup>;

const isEmpty = (p: LegacyGroup['properties']) =>
  p === undefined || (Array.isArray(p) ? p.length === 0 : Object.keys(p).length === 0);

/**
 * A properties group as PostHog's `Cohort.properties` reads it: a list of properties (`type`
 * "event" or none read as "person", a fault of its older UI), an AND/OR group as it is, or the
 * oldest form `{key: value}` (exact person properties).
 */
function propertiesGroup(p: NonNullable<LegacyGroup['properties']>): PropertyGroup {
  if (Array.isArray(p))
    return {
      type: 'AND',
      values: p.map((prop) =>
        prop.type === undefined || prop.type === null || prop.type === 'event'
          ? { ...prop, type: 'person' }
          : prop,
      ),
    };
  if ('type' in p || 'values' in p) return p as PropertyGroup;
  return {
    type: 'AND',
    values: Object.entries(p).map(([key, value]) => ({ key, value, type: 'person' })),
  };
}

/**
 * "Did the event `count` times in the last `days` days" (PostHog: `performed_event_multiple`
 * with the count operator, none meaning equal; no count: `performed_event`; `days` default 365).
 */
function eventGroup(g: LegacyGroup, event: string): PropertyGroup {
  const base = {
    key: event,
    type: 'behavioral',
    value: 'performed_event',
    event_type: 'events',
    time_value: g.days ?? 365,
    time_interval: 'day',
  };
  const count = g.count ?? 0;
  if (count === 0) return { type: 'AND', values: [base] };
  const [operator, value] = ((): [string, number] => {
    switch (g.count_operator) {
      case 'gte':
        return ['gte', count];
      case 'lte':
        return ['lte', count];
      case 'gt':
        return ['gte', count + 1];
      case 'lt':
        return ['lte', count - 1];
      default:
        return ['exact', count];
    }
  })();
  return { type: 'AND', values: [{ ...base, operator, operator_value: value }] };
}

/** The `filters` equivalent to legacy `groups` (400 on what has no equivalent here). */
export function filtersOfGroups(groups: readonly LegacyGroup[]): CohortFilters {
  const values = groups.map((g, i): PropertyGroup => {
    if (!isEmpty(g.properties)) return propertiesGroup(g.properties!);
    if (g.action_id !== undefined && g.action_id !== null && g.action_id !== '')
      return fail(
        invalidInput(
          `groups[${i}]: actions (action_id) are not supported; use event_id.`,
          'groups',
        ),
      );
    if (g.event_id) return eventGroup(g, g.event_id);
    return fail(
      invalidInput(`groups[${i}]: a group needs properties, event_id or action_id.`, 'groups'),
    );
  });
  const parsed = CohortFiltersInput.safeParse({ properties: { type: 'OR', values } });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return fail(invalidInput(`groups: ${issue.message}`, 'groups'));
  }
  return parsed.data as CohortFilters;
}
