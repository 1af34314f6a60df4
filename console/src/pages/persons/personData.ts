import { useQuery } from '@tanstack/react-query';
import { api, type Schemas, unwrap } from '../../api/client.ts';
import { isPersonId } from './propertyChanges.ts';

export type Person = Schemas['Person'];
export type Event = Schemas['Event'];

/** How many of the person's newest events the page lists (and matches timeline changes against); API maximum 10000. */
export const EVENTS_SHOWN = 1000;

/**
 * The live person `/persons/:ref` names: by integer id or uuid as the API takes it, else (or when no person has that
 * id: an anonymous distinct id is a uuid too) the person owning that distinct id.
 */
export const useLivePerson = (projectId: number, ref: string) =>
  useQuery({
    queryKey: ['person', projectId, ref],
    retry: false,
    queryFn: async (): Promise<Person> => {
      const project_id = String(projectId);
      if (isPersonId(ref)) {
        const byId = await api.GET('/api/projects/{project_id}/persons/{id}/', {
          params: { path: { project_id, id: ref } },
        });
        if (byId.data) return byId.data;
        if (byId.response.status !== 404) unwrap(byId);
      }
      const { results } = unwrap(
        await api.GET('/api/projects/{project_id}/persons/', {
          params: { path: { project_id }, query: { distinct_id: ref, limit: 1 } },
        }),
      ) as Schemas['PersonsPage'];
      if (!results[0]) throw new Error(`No person has the id or distinct id “${ref}”.`);
      return results[0];
    },
  });

/** The person as it was at `asOf` (event time, inclusive); null: it did not exist yet. */
export const usePersonAsOf = (projectId: number, uuid: string, asOf: string | null) =>
  useQuery({
    queryKey: ['person', projectId, uuid, 'as_of', asOf],
    enabled: asOf !== null,
    retry: false,
    queryFn: async (): Promise<Person | null> => {
      const result = await api.GET('/api/projects/{project_id}/persons/{id}/', {
        params: { path: { project_id: String(projectId), id: uuid }, query: { as_of: asOf! } },
      });
      if (result.response.status === 404) return null;
      return unwrap(result);
    },
  });

/**
 * Every change of these person properties across the person's events, from the log. The whole time range
 * (the endpoint's default is PostHog's last 7 days); the answer is bounded by the endpoint's own limits.
 */
export const usePropertiesTimeline = (projectId: number, uuid: string, keys: string[]) =>
  useQuery({
    queryKey: ['person', projectId, uuid, 'properties_timeline', keys],
    enabled: keys.length > 0,
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/persons/{id}/properties_timeline/', {
          params: {
            path: { project_id: String(projectId), id: uuid },
            query: {
              date_from: '1970-01-01',
              properties: JSON.stringify(
                keys.map((key) => ({ key, type: 'person', operator: 'is_set' })),
              ),
            },
          },
        }),
      ),
  });

/** The person's newest events (all its distinct ids). */
export const usePersonEvents = (projectId: number, uuid: string, enabled: boolean) =>
  useQuery({
    queryKey: ['person', projectId, uuid, 'events'],
    enabled,
    queryFn: async () =>
      (
        unwrap(
          await api.GET('/api/projects/{project_id}/events/', {
            params: {
              path: { project_id: String(projectId) },
              query: { person_id: uuid, limit: EVENTS_SHOWN },
            },
          }),
        ) as Schemas['EventsPage']
      ).results,
  });
