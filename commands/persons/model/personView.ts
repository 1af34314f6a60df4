import { z } from 'zod';

/** api-spec "Person", plus `is_identified` (PostHog's list items carry it too). */
export const PersonView = z
  .object({
    id: z.number().int(),
    name: z
      .string()
      .describe(
        'display name: email, name or username properties, else a distinct id, else the id',
      ),
    distinct_ids: z
      .array(z.string())
      .describe('non-anonymous (non-UUID-looking) ids first, each part oldest first'),
    properties: z.record(z.string(), z.unknown()),
    is_identified: z.boolean(),
    created_at: z.string(),
    uuid: z.string(),
  })
  .meta({ id: 'Person' });
export type PersonView = z.infer<typeof PersonView>;

export type PersonRecord = {
  id: number;
  uuid: string;
  properties: Record<string, unknown>;
  is_identified: boolean;
  created_at: Date;
  /** in the order they were attached (`ord`) */
  distinct_ids: string[];
};

/** capture.md §4.1: ids shaped like UUIDs (lower-case) count as anonymous. */
const ANONYMOUS = /^([a-z0-9]+-){4}([a-z0-9]+)$/;
export const isAnonymousId = (id: string) => ANONYMOUS.test(id);

/** Non-anonymous ids first; a stable sort keeps attachment order inside each part (PostHog's `sorted(key=is_anonymous_id)`). */
export const sortDistinctIds = (ids: readonly string[]): string[] =>
  [...ids].sort((a, b) => Number(isAnonymousId(a)) - Number(isAnonymousId(b)));

export const DISPLAY_NAME_PROPERTIES = [
  'email',
  'Email',
  '$email',
  'name',
  'Name',
  'username',
  'Username',
  'UserName',
] as const;

/** Python truthiness, as PostHog's `if person_properties.get(property)` reads it. */
const truthy = (v: unknown) =>
  v !== undefined &&
  v !== null &&
  v !== false &&
  v !== 0 &&
  v !== '' &&
  !(Array.isArray(v) && v.length === 0) &&
  !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0);

/** capture.md §4.1 display-name rule (no per-project display properties are configured here). */
export function displayName(
  id: number,
  properties: Record<string, unknown>,
  distinctIds: readonly string[],
): string {
  for (const key of DISPLAY_NAME_PROPERTIES) {
    const v = properties[key];
    if (truthy(v)) return typeof v === 'string' ? v : JSON.stringify(v);
  }
  const sorted = sortDistinctIds(distinctIds);
  return sorted[0] ?? String(id);
}

export function toPersonView(r: PersonRecord): PersonView {
  return {
    id: r.id,
    name: displayName(r.id, r.properties, r.distinct_ids),
    distinct_ids: sortDistinctIds(r.distinct_ids),
    properties: r.properties,
    is_identified: r.is_identified,
    created_at: r.created_at.toISOString(),
    uuid: r.uuid,
  };
}
