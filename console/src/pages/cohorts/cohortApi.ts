import { api, type Schemas, unwrap } from '../../api/client.ts';
import { allows, useCurrentKey, useSessionKey } from '../../auth.ts';

/** A read-only key sees no "New cohort" (the API refuses the write anyway). */
export const useCanWriteCohorts = () => {
  const current = useCurrentKey(useSessionKey());
  return current.data ? allows(current.data.scopes, 'cohort:write') : false;
};

export type PersonCondition = { key: string; operator: string; value: string };

/** PostHog's person property operators the form offers; `is_set`/`is_not_set` take no value. */
export const OPERATORS = [
  ['exact', 'equals'],
  ['is_not', 'does not equal'],
  ['icontains', 'contains'],
  ['not_icontains', 'does not contain'],
  ['gt', 'greater than'],
  ['lt', 'less than'],
  ['is_set', 'is set'],
  ['is_not_set', 'is not set'],
] as const;
const NO_VALUE = new Set(['is_set', 'is_not_set']);
export const takesValue = (operator: string) => !NO_VALUE.has(operator);

/** The form's person conditions as the API's `filters`: one group (PostHog's UI nests its groups in an OR), every
 * condition (AND) or any (OR). */
export function filtersOf(
  match: 'AND' | 'OR',
  conditions: PersonCondition[],
): NonNullable<Schemas['CohortCreateInput']['filters']> {
  return {
    properties: {
      type: 'OR',
      values: [
        {
          type: match,
          values: conditions.map((c) => ({
            type: 'person' as const,
            key: c.key.trim(),
            operator: c.operator,
            ...(takesValue(c.operator) ? { value: c.value } : {}),
          })),
        },
      ],
    },
  };
}

/** A dynamic cohort from filters (JSON), or a static one from a CSV file (multipart, as PostHog's UI sends it). */
export async function createCohort(
  projectId: number,
  input: { name: string; description: string } & (
    | { kind: 'dynamic'; filters: ReturnType<typeof filtersOf> }
    | { kind: 'static'; csv: File }
  ),
) {
  const path = { project_id: String(projectId) };
  if (input.kind === 'dynamic')
    return unwrap(
      await api.POST('/api/projects/{project_id}/cohorts/', {
        params: { path },
        body: { name: input.name, description: input.description, filters: input.filters },
      }),
    );
  const form = new FormData();
  form.set('name', input.name);
  form.set('description', input.description);
  form.set('is_static', 'true');
  form.set('csv', input.csv);
  return unwrap(
    await api.POST('/api/projects/{project_id}/cohorts/', {
      params: { path },
      body: { name: input.name, is_static: true },
      bodySerializer: () => form,
    }),
  );
}
