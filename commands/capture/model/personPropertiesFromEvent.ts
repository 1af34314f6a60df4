import { GEOIP_FIELDS } from '../../../ingress/geoip.ts';
import { putOwn } from '../../../src/core/objects.ts';
import type { EventCapturedData } from './eventCaptured.ts';

/**
 * The person properties an event carries, derived where they are read (issue #27, "the compact
 * log"): the log keeps what the client sent (`set` / `setOnce` as JSON text) and what capture
 * recorded (`$geoip_*` and `geoip`); the copies PostHog's ingestion adds — the GeoIP values mirrored
 * into `$set` / `$set_once` and the automatic person properties (capture.md §3.9,
 * `personInitialAndUTMProperties`) — are computed from them by `personSetsOf`, by the persons fold
 * and by the ClickHouse row alike. ClickHouse's replay of the log builds the same text in SQL
 * (projections/shared/capturedDataSql.ts), so the order below is part of the format:
 *
 * - `$set` = the client's `$set`, then, in the order of `properties`, each `$geoip_*` (when GeoIP
 *   ran; its value wins over the client's) and each automatic key the client's `$set` lacks;
 * - `$set_once` = each `$geoip_*` as `$initial_geoip_*` (the client's value wins), the client's
 *   `$set_once`, then each automatic key as `$initial_<key>` it lacks, when the value is not null;
 * - an event with `$is_server: true` lifts none of `$os`, `$os_version`; `$snapshot` and
 *   `$groupidentify` lift no automatic key; a set is present when the client sent it or a key
 *   was added.
 *
 * Records of older releases (no `v`) hold the merged sets inside `properties`, as they are read.
 */

/** Device and page context keys (mobile and web). `$os_name` is folded into `$os` at capture. */
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

/** Lifted from no event with `$is_server: true` (server SDKs stamp their host's OS). */
export const SERVER_HOST_OS_KEYS: readonly string[] = ['$os', '$os_version'];

/** The properties GeoIP fills, mirrored into `$set` and (as `$initial_…`) `$set_once`. */
export const GEOIP_PROPERTY_KEYS: readonly string[] = GEOIP_FIELDS.map((f) => `$geoip_${f}`);

/** Events that lift no automatic person property (PostHog's ingestion skips them). */
export const WITHOUT_AUTOMATIC_PROPERTIES: readonly string[] = ['$snapshot', '$groupidentify'];

// Keys built once: a key built per event is a new string V8 must look up every time it is used.
const AUTOMATIC = new Map(AUTOMATIC_PERSON_PROPERTY_KEYS.map((k) => [k, initialKey(k)]));
const GEOIP = new Map(GEOIP_PROPERTY_KEYS.map((k) => [k, initialKey(k)]));
const SERVER_OS = new Set(SERVER_HOST_OS_KEYS);

type Properties = Record<string, unknown>;

const isObject = (value: unknown): value is Properties =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const has = (object: object | undefined, key: string) =>
  object !== undefined && Object.hasOwn(object, key);

/** JSON text of a client's set, as the log holds it; its own object (the caller may add to it). */
const parsedSet = (text: string | null | undefined): Properties | undefined => {
  if (text === null || text === undefined) return undefined;
  const value = JSON.parse(text) as unknown;
  return isObject(value) ? value : {};
};

export type PersonSets = Readonly<{
  set: Properties | undefined;
  setOnce: Properties | undefined;
}>;

/** The event's `$set` and `$set_once` as PostHog's ingestion stores them (see above). */
export function personSetsOf(d: EventCapturedData): PersonSets {
  const p = d.properties;
  if (d.v !== 2)
    return {
      set: isObject(p.$set) ? p.$set : undefined,
      setOnce: isObject(p.$set_once) ? p.$set_once : undefined,
    };
  const set = parsedSet(d.set) ?? {};
  const sentSet = d.set !== null && d.set !== undefined;
  const sentOnce = parsedSet(d.setOnce);
  const setOnce: Properties = {};
  const automatic = !WITHOUT_AUTOMATIC_PROPERTIES.includes(d.event);
  const isServer = p.$is_server === true;
  const lifted = (key: string) =>
    automatic && !(isServer && SERVER_OS.has(key)) ? AUTOMATIC.get(key) : undefined;
  let added = false;
  // $set: GeoIP and automatic keys; $set_once: GeoIP's initials, then the client's
  for (const key in p) {
    const geoInitial = d.geoip ? GEOIP.get(key) : undefined;
    if (geoInitial !== undefined) {
      putOwn(set, key, p[key]);
      putOwn(setOnce, geoInitial, p[key]);
      added = true;
    } else if (lifted(key) !== undefined && !has(set, key)) {
      putOwn(set, key, p[key]);
      added = true;
    }
  }
  if (sentOnce) for (const key of Object.keys(sentOnce)) putOwn(setOnce, key, sentOnce[key]);
  // …then the automatic initials the client's $set_once lacks
  for (const key in p) {
    const initial = lifted(key);
    const value = p[key];
    if (initial !== undefined && value !== null && value !== undefined && !has(sentOnce, initial))
      putOwn(setOnce, initial, value);
  }
  const onceAdded =
    (d.setOnce !== null && d.setOnce !== undefined) || Object.keys(setOnce).length > 0;
  return { set: sentSet || added ? set : undefined, setOnce: onceAdded ? setOnce : undefined };
}

/**
 * The event's properties as ClickHouse stores them, as JSON text: `properties` (or the given
 * copy of them, e.g. with `$group_N` added) followed by `$set` and `$set_once`.
 */
export function propertiesText(
  d: EventCapturedData,
  properties: Properties = d.properties,
): string {
  const base = JSON.stringify(properties);
  if (d.v !== 2) return base;
  const { set, setOnce } = personSetsOf(d);
  let sets = '';
  if (set) sets += `,"$set":${JSON.stringify(set)}`;
  if (setOnce) sets += `,"$set_once":${JSON.stringify(setOnce)}`;
  if (sets === '') return base;
  return base === '{}' ? `{${sets.slice(1)}}` : `${base.slice(0, -1)}${sets}}`;
}

/** The event's properties with `$set` and `$set_once` in them, as an object (for readers of one event). */
export const propertiesWithPersonSets = (d: EventCapturedData): Properties =>
  d.v === 2 ? (JSON.parse(propertiesText(d)) as Properties) : d.properties;
