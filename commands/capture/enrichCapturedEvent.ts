import {
  type GeoIp,
  type GeoIpProperties,
  geoipProperties,
  shouldSkipGeoip,
} from '../../ingress/geoip.ts';
import { assignInto, copyOf } from '../../src/core/objects.ts';
import { elementsChainOf } from './model/elementsChain.ts';
import type { EventCapturedData } from './model/eventCaptured.ts';
import type { NormalizedEventData } from './normalizeCapturedEvent.ts';

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * GeoIP by address, once per request: a request's events nearly always share one address, and
 * each lookup built three objects of up to a dozen keys for every event.
 */
export function geoipPerRequest(geoip: GeoIp): (ip: string) => GeoIpProperties | null {
  const seen = new Map<string, GeoIpProperties | null>();
  return (ip) => {
    let found = seen.get(ip);
    if (found === undefined) {
      const geo = geoipProperties(geoip.lookup(ip));
      // Only a successful lookup touches the event: an address without a record (loopback, private
      // ranges) must not leave empty `$set` / `$set_once` objects behind, which PostHog never stores.
      found = Object.keys(geo.properties).length > 0 ? geo : null;
      if (seen.size < 64) seen.set(ip, found);
    }
    return found;
  };
}

const UNSTORED = new Set(['$set', '$set_once', '$elements', '$elements_chain']);

/**
 * A client's set as the log keeps it: JSON text of an object (anything else counts as `{}`),
 * without the key `without` (`$os_name`'s, which PostHog drops), with `extra` where it is missing.
 */
function setText(
  value: unknown,
  without: string | undefined,
  extra?: readonly [string, unknown],
): string | null {
  if (value === undefined && extra === undefined) return null;
  if (!isRecord(value)) return extra ? JSON.stringify({ [extra[0]]: extra[1] }) : '{}';
  const strip = without !== undefined && Object.hasOwn(value, without);
  const add = extra !== undefined && !Object.hasOwn(value, extra[0]);
  if (!strip && !add) return JSON.stringify(value);
  const copy = copyOf(value);
  if (strip) delete copy[without];
  if (add) copy[extra[0]] = extra[1];
  return JSON.stringify(copy);
}

/**
 * The record the log keeps of an event (issue #27, the compact log): what the client sent and what
 * capture alone can know — GeoIP's answer (`$geoip_*` and `geoip`), the elements chain — and no
 * copy a reader can derive: the person properties PostHog's ingestion adds to `$set` / `$set_once`
 * are computed where they are read (model/personPropertiesFromEvent.ts). `$os_name` is PostHog's
 * alias of `$os`: it fills a missing `$os` (a null one only as `$initial_os`), and PostHog drops
 * it from the client's sets.
 * Built key by key into a new object: V8 grows an object's property store a few slots at a time,
 * so adding keys one by one to the decoded event cost more (in garbage collection) than a copy.
 */
export function enrichCapturedEvent(
  data: NormalizedEventData,
  geoFor: (ip: string) => GeoIpProperties | null,
): EventCapturedData {
  const source = data.properties;
  const geo = shouldSkipGeoip(source) ? null : geoFor(String(source.$ip));
  const properties: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    if (UNSTORED.has(key)) continue;
    if (key === '__proto__') assignInto(properties, { [key]: source[key] });
    else properties[key] = source[key];
  }
  if (geo) assignInto(properties, geo.properties);
  const osName = source.$os_name;
  const osAlias = Object.hasOwn(source, '$os_name') && source.$is_server !== true;
  if (osAlias && !Object.hasOwn(properties, '$os')) properties.$os = osName;
  const initialOs: [string, unknown] | undefined =
    osAlias && properties.$os === null && osName !== null ? ['$initial_os', osName] : undefined;
  return {
    uuid: data.uuid,
    projectId: data.projectId,
    event: data.event,
    distinctId: data.distinctId,
    v: 2,
    geoip: geo !== null,
    properties,
    timestamp: data.timestamp,
    sentAt: data.sentAt,
    receivedAt: data.receivedAt,
    ip: data.ip,
    elementsChain: elementsChainOf(source),
    set: setText(source.$set, osAlias ? '$os_name' : undefined),
    setOnce: setText(source.$set_once, osAlias ? '$initial_os_name' : undefined, initialOs),
  };
}
