/** The events page's filters live in the URL (`/events?event=…`): bookmarkable, and the back button restores them. */
export type EventFilters = {
  event: string;
  distinct_id: string;
  property: string;
  after: string;
  before: string;
  where: string;
};

export const FILTER_NAMES = [
  'event',
  'distinct_id',
  'property',
  'after',
  'before',
  'where',
] as const;

export const filtersOf = (search: string): EventFilters => {
  const params = new URLSearchParams(search);
  return Object.fromEntries(FILTER_NAMES.map((n) => [n, params.get(n) ?? ''])) as EventFilters;
};

export const searchOf = (filters: EventFilters): string => {
  const params = new URLSearchParams();
  for (const n of FILTER_NAMES) if (filters[n].trim()) params.set(n, filters[n].trim());
  const text = params.toString();
  return text ? `?${text}` : '';
};

/**
 * The events list's query: `property` is `key=value` (an exact event property match) or a bare `key` (is set).
 * Times are ISO or relative (`-1h`, `-7d`), as the API takes them.
 */
export function listQueryOf(filters: EventFilters) {
  const property = filters.property.trim();
  const [key, ...rest] = property.split('=');
  const properties = property
    ? JSON.stringify([
        rest.length
          ? { key: key!.trim(), value: rest.join('=').trim(), operator: 'exact', type: 'event' }
          : { key: key!.trim(), operator: 'is_set', type: 'event' },
      ])
    : undefined;
  return {
    limit: 100,
    ...(filters.event ? { event: filters.event } : {}),
    ...(filters.distinct_id ? { distinct_id: filters.distinct_id } : {}),
    ...(properties ? { properties } : {}),
    ...(filters.after ? { after: filters.after } : {}),
    ...(filters.before ? { before: filters.before } : {}),
    ...(filters.where ? { where: [filters.where] } : {}),
  };
}
