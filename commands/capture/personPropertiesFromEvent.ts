import { copyOf } from '../../src/core/objects.ts';

/**
 * Event properties copied to person properties automatically (capture.md §3.9), as PostHog's
 * ingestion `personInitialAndUTMProperties` does in its current form:
 *
 * - for each key below present on the event (even with a null value): `$set[key] = value` unless the
 *   event's own `$set` already has the key (explicit `$set` wins), and
 *   `$set_once["$initial_" + key without its leading "$"] = value` unless already there and only when
 *   the value is not null (a null would block the real first-touch value forever);
 * - `$os_name` is an alias of `$os`: it fills the event's `$os`, `$set.$os` and `$set_once.$initial_os`
 *   where those are absent, and `$os_name` / `$initial_os_name` are removed from both sets;
 * - an event with `$is_server: true` (server SDKs stamp their host's OS) lifts none of `$os`,
 *   `$os_version`, `$os_name`; campaign parameters and the rest still flow.
 * A malformed `$set` / `$set_once` (not an object) is replaced by `{}` once a key is copied. When no key
 * is present the properties come back unchanged. The input is never mutated.
 *
 * Not here (caller's job): skipping `$snapshot` / `$performance_event`, personless events, and
 * `survey shown` → `$survey_last_seen_date`.
 */

/** Device and page context keys (mobile and web). */
export const EVENT_TO_PERSON_PROPERTIES = [
  '$app_build',
  '$app_name',
  '$app_namespace',
  '$app_version',
  '$browser',
  '$browser_version',
  '$device_type',
  '$current_url',
  '$pathname',
  '$os',
  '$os_name',
  '$os_version',
  '$referring_domain',
  '$referrer',
  '$screen_height',
  '$screen_width',
  '$viewport_height',
  '$viewport_width',
  '$raw_user_agent',
] as const;

/** Campaign parameters (UTM and ad-click ids). */
export const CAMPAIGN_PROPERTIES = [
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'utm_name',
  'utm_term',
  'gclid',
  'gad_source',
  'gclsrc',
  'dclid',
  'gbraid',
  'wbraid',
  'fbclid',
  'msclkid',
  'twclid',
  'li_fat_id',
  'mc_cid',
  'igshid',
  'ttclid',
  'rdt_cid',
  'irclid',
  '_kx',
  'epik',
  'qclid',
  'sccid',
] as const;

export const AUTOMATIC_PERSON_PROPERTY_KEYS: readonly string[] = [
  ...EVENT_TO_PERSON_PROPERTIES,
  ...CAMPAIGN_PROPERTIES,
];

/** `$browser` → `$initial_browser`, `utm_source` → `$initial_utm_source`. */
export const initialKey = (key: string): string => `$initial_${key.replace('$', '')}`;

/**
 * Each automatic key with its `$initial_` key, built once: a key built per event is a new string
 * that V8 must look up in its table of property names every time it is used as one.
 */
const WITH_INITIAL_KEYS: readonly (readonly [string, string])[] =
  AUTOMATIC_PERSON_PROPERTY_KEYS.map((key) => [key, initialKey(key)] as const);

const SERVER_HOST_OS_KEYS = new Set(['$os', '$os_version', '$os_name']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const has = (object: object, key: string) => Object.hasOwn(object, key);

export function addAutomaticPersonProperties(
  properties: Record<string, unknown>,
): Record<string, unknown> {
  const isServer = properties.$is_server === true;
  const present = WITH_INITIAL_KEYS.filter(
    ([key]) => has(properties, key) && !(isServer && SERVER_HOST_OS_KEYS.has(key)),
  );
  if (present.length === 0) return copyOf(properties);

  const result: Record<string, unknown> = copyOf(properties);
  const set: Record<string, unknown> = isObject(properties.$set) ? copyOf(properties.$set) : {};
  const setOnce: Record<string, unknown> = isObject(properties.$set_once)
    ? copyOf(properties.$set_once)
    : {};

  for (const [key, initial] of present) {
    const value = properties[key];
    if (!has(set, key)) set[key] = value;
    if (value !== null && value !== undefined && !has(setOnce, initial)) setOnce[initial] = value;
  }

  if (has(properties, '$os_name') && !isServer) {
    const osName = properties.$os_name;
    if (!has(properties, '$os')) result.$os = osName;
    if (!has(set, '$os')) set.$os = osName;
    if (osName !== null && osName !== undefined && !has(setOnce, '$initial_os'))
      setOnce.$initial_os = osName;
    delete set.$os_name;
    delete setOnce.$initial_os_name;
  }

  result.$set = set;
  result.$set_once = setOnce;
  return result;
}
