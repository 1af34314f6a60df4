import type { Schemas } from '../../api/client.ts';

export type TimelinePoint = Schemas['PersonPropertiesTimeline']['points'][number];

/** One property taking a new value: the value before (undefined: not set) and after, and when. */
export type PropertyChange = { key: string; before: unknown; after: unknown; timestamp: string };

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The timeline endpoint answers snapshots (a point wherever any watched property changes, taken right after the
 * event that changed it); the page wants each property's own history, so each key's changes are the points where
 * its value differs from the previous point's. Newest first per key, keys sorted.
 */
export function changesByKey(
  points: readonly TimelinePoint[],
  keys: readonly string[],
): Map<string, PropertyChange[]> {
  const byKey = new Map<string, PropertyChange[]>();
  for (const key of [...keys].sort()) {
    const changes: PropertyChange[] = [];
    let before: unknown;
    for (const point of points) {
      const after = point.properties[key];
      if (!same(after, before)) changes.push({ key, before, after, timestamp: point.timestamp });
      before = after;
    }
    byKey.set(key, changes.reverse());
  }
  return byKey;
}

/** A property value as the page shows it (as the properties tables show it). */
export { propertyText as shown } from '../../propertiesTable.tsx';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `/persons/:id` takes what the API takes (integer id or uuid) and, as the events page links, a distinct id. */
export const isPersonId = (id: string) => /^\d+$/.test(id) || UUID.test(id);

/**
 * datetime-local's value (local time, no zone) ↔ ISO time in UTC. The control shows the browser's local time; the URL
 * and the API get the instant.
 */
export const isoOfLocal = (local: string): string | null => {
  const ms = Date.parse(local);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
};
export const localOfIso = (iso: string): string => {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};
