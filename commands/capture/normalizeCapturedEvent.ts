import { normalisePath } from '../../ingress/decodeRequestBody.ts';
import { assignInto, copyOf } from '../../src/core/objects.ts';
import type { EventCapturedData } from './model/eventCaptured.ts';
import { isObject } from './parseCaptureBatch.ts';
import { parseCaptureTimestamp } from './parseTimestamp.ts';
import { parseUuid, uuidv7 } from './uuid.ts';

/**
 * One raw event (validated by parseCaptureBatch) → the EventCaptured data we append, or a drop (decision 1: a missing
 * or empty event name or distinct id drops only that event, with an ingestion warning, and the request still gets 200).
 * The rules are capture-rs's per-event checks plus the part of PostHog ingestion that depends only on the request
 * (capture.md §2.3, §2.5, §3.1 steps 1-3 and 5); project settings, persons, GeoIP and elements come later.
 */

/** An ingestion warning before it is tied to a project and a time: PostHog's type names and detail keys. */
export type Warning = { type: string; details: Record<string, unknown> };

export type NormalizeContext = {
  projectId: number;
  /** when the request was received: the base of skew correction and `receivedAt` */
  now: Date;
  /** the request's send time as parseCaptureBatch found it (unparsed) */
  sentAt: string | undefined;
  ip: string | null;
  path: string;
};

/**
 * `elements` is never set by this module: `$elements` (array) and `$elements_chain` (string) are passed through
 * untouched inside `properties`, for the elements converter that fills `elementsChain` and removes both keys.
 */
export type NormalizedEventData = Omit<EventCapturedData, 'elementsChain'> & { elements?: unknown };

export type NormalizedCapturedEvent =
  | { kind: 'accepted'; data: NormalizedEventData; warnings: Warning[] }
  | { kind: 'dropped'; warning: Warning };

export const MAX_EVENT_NAME_LENGTH = 200;
export const MAX_DISTINCT_ID_LENGTH = 200;
/** Events dated further ahead than this are moved to `now` (capture.md §2.5 step 5). */
export const MAX_FUTURE_MS = 23 * 60 * 60 * 1000;

export function normalizeCapturedEvent(
  item: Record<string, unknown>,
  ctx: NormalizeContext,
): NormalizedCapturedEvent {
  const clientUuid =
    typeof item.uuid === 'string' && item.uuid !== '' ? parseUuid(item.uuid) : null;
  const props = isObject(item.properties) ? item.properties : {};

  // Event name: required; /engage's nameless people updates are identifies (capture-rs); non-strings stringified.
  let event: string;
  if (item.event === undefined || item.event === null) {
    if (normalisePath(ctx.path) !== '/engage') {
      return drop('skipping_event_invalid_event_name', {
        eventUuid: clientUuid,
        field: 'event',
        reason: 'missing',
      });
    }
    event = '$identify';
  } else {
    event = truncate(
      typeof item.event === 'string' ? item.event : JSON.stringify(item.event),
      MAX_EVENT_NAME_LENGTH,
    );
    if (event === '')
      return drop('skipping_event_invalid_event_name', {
        eventUuid: clientUuid,
        field: 'event',
        reason: 'empty',
      });
  }

  // Distinct id: top level (alias $distinct_id), then properties; null counts as absent so the next place is tried.
  const rawId = [item.distinct_id, item.$distinct_id, props.distinct_id].find(
    (v) => v !== undefined && v !== null,
  );
  if (rawId === undefined) {
    const named = 'distinct_id' in item || '$distinct_id' in item || 'distinct_id' in props;
    return drop('skipping_event_invalid_distinct_id', {
      eventUuid: clientUuid,
      eventName: event,
      field: 'distinct_id',
      reason: named ? 'null' : 'missing',
    });
  }
  // JSON-stringified when not a string (23 → "23"); NUL → U+FFFD as capture-rs does; cut at 200 characters.
  const distinctId = truncate(
    (typeof rawId === 'string' ? rawId : JSON.stringify(rawId)).replace(/\0/g, '\uFFFD'),
    MAX_DISTINCT_ID_LENGTH,
  );
  if (distinctId === '') {
    return drop('skipping_event_invalid_distinct_id', {
      eventUuid: clientUuid,
      eventName: event,
      field: 'distinct_id',
      reason: 'empty',
    });
  }

  const uuid = clientUuid ?? uuidv7(ctx.now);
  const warnings: Warning[] = [];

  // Top-level $set / $set_once merged into properties, top-level keys winning (§3.1 step 2).
  const properties: Record<string, unknown> = copyOf(props);
  for (const op of ['$set', '$set_once'] as const) {
    const top = item[op];
    if (isObject(top))
      properties[op] = assignInto(copyOf(isObject(properties[op]) ? properties[op] : {}), top);
  }
  // The capture IP only fills a missing $ip: a client may send its own (§3.1 step 3).
  if (!('$ip' in properties) && ctx.ip !== null) properties.$ip = ctx.ip;

  const ignoreSentAt = properties.$ignore_sent_at === true;
  const sentAtDate = ctx.sentAt === undefined ? null : inBounds(parseCaptureTimestamp(ctx.sentAt));
  const sentAt = sentAtDate?.toISOString() ?? null;
  if (ctx.sentAt !== undefined && sentAtDate === null && !ignoreSentAt) {
    warnings.push(
      warning('ignored_invalid_timestamp', {
        eventUuid: uuid,
        field: 'sent_at',
        value: ctx.sentAt,
        reason: 'unparseable',
      }),
    );
  }
  if (sentAt !== null) properties.$sent_at = sentAt;

  const timestamp = eventTime(
    item,
    ctx.now,
    ignoreSentAt ? null : sentAtDate,
    uuid,
    event,
    warnings,
  );

  return {
    kind: 'accepted',
    data: {
      uuid,
      projectId: ctx.projectId,
      event,
      distinctId,
      properties,
      timestamp,
      sentAt,
      receivedAt: ctx.now.toISOString(),
      ip: ctx.ip,
    },
    warnings,
  };
}

/**
 * capture.md §2.5: start from now; a parseable timestamp is taken as sent, or shifted by the client's clock skew
 * (sent_at − now) when there is a sent_at; `offset` (ms before now) overrides both (0 honoured, as capture-rs does);
 * more than 23 h ahead → now; a year outside 0-9999 → now.
 */
function eventTime(
  item: Record<string, unknown>,
  now: Date,
  sentAt: Date | null,
  eventUuid: string,
  eventName: string,
  warnings: Warning[],
): string {
  const nowMs = now.getTime();
  let result = nowMs;
  const raw = item.timestamp;
  if (raw !== undefined && raw !== null && raw !== '') {
    const parsed = parseCaptureTimestamp(raw);
    if (parsed === null) {
      warnings.push(
        warning('ignored_invalid_timestamp', {
          eventUuid,
          field: 'timestamp',
          value: raw,
          reason: 'unparseable',
        }),
      );
    } else {
      result = sentAt ? nowMs + (parsed.getTime() - sentAt.getTime()) : parsed.getTime();
    }
  }
  const offset = item.offset;
  if (typeof offset === 'number' && Number.isFinite(offset)) result = nowMs - offset;

  if (result - nowMs > MAX_FUTURE_MS) {
    warnings.push(
      warning('event_timestamp_in_future', {
        eventUuid,
        eventName,
        timestamp: raw ?? '',
        sentAt: sentAt?.toISOString() ?? '',
        offset: offset ?? '',
        now: now.toISOString(),
        // A huge negative `offset` puts the result past the last date a Date can hold: say the number then
        // (toISOString would throw, and the request answered 500).
        result: Number.isNaN(new Date(result).getTime())
          ? String(result)
          : new Date(result).toISOString(),
      }),
    );
    result = nowMs;
  }
  if (inBounds(new Date(result)) === null) {
    warnings.push(
      warning('ignored_invalid_timestamp', {
        eventUuid,
        field: 'timestamp',
        value: raw ?? '',
        reason: 'out of bounds',
      }),
    );
    result = nowMs;
  }
  return new Date(result).toISOString();
}

/** ISO 8601 can only say years 0-9999 without the extended `+YYYYYY` form that nothing downstream reads. */
function inBounds(d: Date | null): Date | null {
  if (d === null || Number.isNaN(d.getTime())) return null;
  const year = d.getUTCFullYear();
  return year < 0 || year > 9999 ? null : d;
}

/** Cut to n Unicode characters (not UTF-16 units), so that a surrogate pair is never split. */
function truncate(s: string, n: number): string {
  if (s.length <= n) return s;
  // 2n units hold at least n whole code points; only those are kept.
  return Array.from(s.slice(0, 2 * n))
    .slice(0, n)
    .join('');
}

const warning = (type: string, details: Record<string, unknown>): Warning => ({ type, details });
const drop = (type: string, details: Record<string, unknown>): NormalizedCapturedEvent => ({
  kind: 'dropped',
  warning: warning(type, details),
});
