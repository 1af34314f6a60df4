import {
  enrichCapturedEvent,
  geoipPerRequest,
} from '../../commands/capture/enrichCapturedEvent.ts';
import type { EventCapturedData } from '../../commands/capture/model/eventCaptured.ts';
import { normalizeCapturedEvent } from '../../commands/capture/normalizeCapturedEvent.ts';
import { openGeoIp } from '../../ingress/geoip.ts';
import { DISTINCT_USERS, GEO, jsEvent } from './captureBodies.ts';

const geoFor = geoipPerRequest(await openGeoIp());

/**
 * bench/capture's posthog-js-like event `i` as capture writes it into the log (normalised, GeoIP
 * and automatic person properties added), or compact: normalised only, without what a projection
 * could derive.
 */
export function capturedData(i: number, enriched = true, now = new Date()): EventCapturedData {
  const item = {
    ...jsEvent(i % DISTINCT_USERS, i),
    uuid: `0192f0c4-7b1e-7d3a-9c4e-${String(200000000000 + i)}`,
  };
  const normalized = normalizeCapturedEvent(item, {
    projectId: 1,
    now,
    sentAt: now.toISOString(),
    ip: GEO['x-forwarded-for'],
    path: '/batch',
  });
  if (normalized.kind !== 'accepted') throw new Error('the bench event was dropped');
  return enriched
    ? enrichCapturedEvent(normalized.data, geoFor)
    : { ...normalized.data, elementsChain: '' };
}
