import type { Event } from '../../../src/core/event.ts';

/**
 * One ingested analytics event, exactly as accepted. Everything a rebuild needs is here, so no
 * read model ever has to look outside the log (receive time, IP, sent_at, corrected timestamp,
 * GeoIP properties computed at capture time).
 */
export type EventCapturedData = {
  uuid: string;
  projectId: number;
  event: string;
  distinctId: string;
  /**
   * 2: the compact record (issue #27): `properties` without `$set` / `$set_once`, the client's
   * sets in `set` / `setOnce`, the copies ingestion adds to them derived by readers
   * (`personSetsOf`, `propertiesText` in personPropertiesFromEvent.ts). Absent in records of
   * older releases, whose `properties` hold the merged sets.
   */
  v?: 2;
  /** v2: GeoIP filled the `$geoip_*` properties (readers mirror them into the sets) */
  geoip?: boolean;
  /**
   * Stored properties: $ip filled from the capture IP when absent, $geoip_* added, $sent_at;
   * $elements and $elements_chain removed (the chain is in elementsChain); `$os` from `$os_name`.
   */
  properties: Record<string, unknown>;
  /** skew-corrected event time, ISO 8601 UTC with milliseconds */
  timestamp: string;
  elementsChain: string;
  /** the client's send time, when it sent one (ISO) */
  sentAt: string | null;
  /** server receive time (ISO) */
  receivedAt: string;
  /** client IP: first X-Forwarded-For hop, else the socket address */
  ip: string | null;
  /** v2: the client's `$set` (top-level and in properties, merged) as JSON text; null: none */
  set?: string | null;
  /** v2: the client's `$set_once`, the same way */
  setOnce?: string | null;
};

export type EventCaptured = Event<'EventCaptured', EventCapturedData>;

export type IngestionWarningData = {
  projectId: number;
  /** PostHog's warning types, e.g. "skipping_event_invalid_distinct_id", "ignored_invalid_timestamp" */
  type: string;
  /** the event's uuid when known */
  eventUuid: string | null;
  details: Record<string, unknown>;
  at: string;
};
export type IngestionWarningRecorded = Event<'IngestionWarningRecorded', IngestionWarningData>;

export const CAPTURE_CATEGORY = 'capture';
/** Captured events are grouped per distinct id: the order PostHog guarantees (token:distinct_id). */
export const captureStream = (projectId: number, distinctId: string) =>
  `${CAPTURE_CATEGORY}-${projectId}:${distinctId}`;
export const ingestionWarningStream = (projectId: number) => `ingestion_warning-${projectId}`;
