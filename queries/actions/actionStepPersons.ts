import type pg from 'pg';
import type { ActionStep } from '../../commands/actions/model/action.ts';
import type { CompiledActionStep } from '../../projections/events/actionStepsSql.ts';
import { prepareHogQLFilters } from '../../projections/events/propertyFilters.ts';
import { resolvePersonFilters } from '../events/eventPersonFilters.ts';

/**
 * The steps with their person property filters resolved in Postgres (as the events list's own
 * `properties`): each becomes a set of distinct ids the step's events must come from. Steps with
 * none are returned as they are. Call it once the persons read model has caught up.
 */
export async function withStepPersons(
  pool: pg.Pool,
  projectId: number,
  now: Date,
  steps: readonly ActionStep[],
): Promise<CompiledActionStep[]> {
  return Promise.all(
    steps.map(async (step) => {
      await prepareHogQLFilters(step.properties);
      if (!step.properties?.some((p) => p.type === 'person')) return step;
      const resolved = await resolvePersonFilters(pool, {
        projectId,
        now,
        properties: step.properties,
        where: undefined,
      });
      return {
        ...step,
        properties: resolved.properties as ActionStep['properties'],
        personIdSets: resolved.personIdSets,
      };
    }),
  );
}
