import { useLocation, useSearch } from 'wouter-preact';

/**
 * Every insight keeps its parameters in the URL (`/insights/trends?event=…&interval=week&point=0:6`): a bookmark
 * opens the same chart with the same persons listed, and the back button steps through what was asked.
 */
export function useInsightUrl(path: string) {
  const search = useSearch();
  const params = new URLSearchParams(search);
  const [, navigate] = useLocation();
  const get = (name: string, fallback = '') => params.get(name) ?? fallback;
  /** The same page with `patch` applied (an empty value removes the parameter). */
  const go = (patch: Record<string, string | string[] | undefined>) => {
    const next = new URLSearchParams(params);
    for (const [name, value] of Object.entries(patch)) {
      next.delete(name);
      for (const v of Array.isArray(value) ? value : [value])
        if (v?.trim()) next.append(name, v.trim());
    }
    const text = next.toString();
    navigate(`${path}${text ? `?${text}` : ''}`);
  };
  return { search, params, get, go };
}

/** The filters all three insights share: a date range and one property filter. */
export type CommonFilters = {
  date_from: string;
  date_to: string;
  property: string;
  property_type: string;
};
export const COMMON_NAMES = ['date_from', 'date_to', 'property', 'property_type'] as const;

export const commonOf = (get: (name: string, fallback?: string) => string): CommonFilters => ({
  date_from: get('date_from', '-7d'),
  date_to: get('date_to'),
  property: get('property'),
  property_type: get('property_type', 'event'),
});

/**
 * `key=value` (equals) or a bare `key` (is set), of the event or of its person, as PostHog's property filter list
 * (the legacy `properties` parameter, JSON text).
 */
export function propertiesOf(f: Pick<CommonFilters, 'property' | 'property_type'>) {
  const text = f.property.trim();
  if (!text) return undefined;
  const [key, ...rest] = text.split('=');
  const type = f.property_type === 'person' ? 'person' : 'event';
  return JSON.stringify([
    rest.length
      ? { key: key!.trim(), value: rest.join('=').trim(), operator: 'exact', type }
      : { key: key!.trim(), operator: 'is_set', type },
  ]);
}

/** The range and property filter as the legacy insight endpoints take them. */
export const rangeQueryOf = (f: CommonFilters) => {
  const properties = propertiesOf(f);
  return {
    ...(f.date_from ? { date_from: f.date_from } : {}),
    ...(f.date_to ? { date_to: f.date_to } : {}),
    ...(properties ? { properties } : {}),
  };
};
