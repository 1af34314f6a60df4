import {
  type GeoIp,
  type GeoIpProperties,
  geoipProperties,
  shouldSkipGeoip,
} from '../../ingress/geoip.ts';
import { assignInto, copyOf } from '../../src/core/objects.ts';
import { takeElementsChain } from './model/elementsChain.ts';
import type { EventCapturedData } from './model/eventCaptured.ts';
import type { NormalizedEventData } from './normalizeCapturedEvent.ts';
import { addAutomaticPersonProperties } from './personPropertiesFromEvent.ts';

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

const asRecord = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});

/**
 * GeoIP, automatic person properties and the elements chain: computed once, stored in the log.
 * Built by copies, not written into the decoded object: V8 grows an object's property store a few
 * slots at a time, so adding forty keys one by one to an event cost more (in garbage collection)
 * than the three copies (bench/captureUseCase.ts: 126–146 µs an event against 100–115).
 */
export function enrichCapturedEvent(
  data: NormalizedEventData,
  geoFor: (ip: string) => GeoIpProperties | null,
): EventCapturedData {
  let properties = data.properties;
  const geo = shouldSkipGeoip(properties) ? null : geoFor(String(properties.$ip));
  if (geo) {
    const withGeo = assignInto(copyOf(properties), geo.properties);
    // PostHog's GeoIP step runs after the client's $set, so its values win there; the client's
    // own $set_once still comes first.
    withGeo.$set = assignInto(copyOf(asRecord(properties.$set)), geo.set);
    withGeo.$set_once = assignInto(copyOf(geo.setOnce), asRecord(properties.$set_once));
    properties = withGeo;
  }
  if (data.event !== '$snapshot' && data.event !== '$groupidentify')
    properties = addAutomaticPersonProperties(properties);
  const { elementsChain, properties: withoutElements } = takeElementsChain(properties);
  const { elements: _elements, ...rest } = data;
  return { ...rest, properties: withoutElements, elementsChain };
}
