import type { EventCapturedData } from '../../commands/capture/model/eventCaptured.ts';
import { personSetsOf } from '../../commands/capture/model/personPropertiesFromEvent.ts';
import { copyOf } from '../../src/core/objects.ts';

/**
 * PostHog's person property rules (capture.md §3.3, §3.4), pure: shared by the persons projection
 * and by time travel, so "now" and "as of" cannot drift apart.
 */
export type Properties = Record<string, unknown>;

const asRecord = (v: unknown): Properties =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Properties) : {};

export type PersonUpdate = Readonly<{ set: Properties; setOnce: Properties; unset: string[] }>;

/**
 * An event's $set/$set_once (with the copies ingestion adds, derived from the record) and
 * $unset, which may be a list of keys or an object.
 */
export function personUpdateOf(d: EventCapturedData): PersonUpdate {
  const rawUnset = d.properties.$unset;
  const unset = Array.isArray(rawUnset)
    ? rawUnset.filter((k): k is string => typeof k === 'string')
    : Object.keys(asRecord(rawUnset));
  const { set, setOnce } = personSetsOf(d);
  return { set: set ?? {}, setOnce: setOnce ?? {}, unset };
}

/**
 * Most keys a person holds: updates change existing keys freely but add no new key past it. One
 * 30,000-key `$set` once made every persons export 61 MB; capture also limits keys per event.
 */
export const MAX_PERSON_PROPERTIES = 10_000;

/**
 * $set_once only fills keys the person does not have (a stored null counts as present), then $set
 * overwrites, then $unset removes — so a key both set and unset in one event ends up removed.
 * A new key past `MAX_PERSON_PROPERTIES` is not added. Returns the same object when nothing changed.
 */
export function applyPersonUpdate(current: Properties, update: PersonUpdate): Properties {
  let next: Properties | undefined;
  let room = MAX_PERSON_PROPERTIES - Object.keys(current).length;
  const write = (key: string, value: unknown) => {
    const target = next ?? current;
    if (!(key in target)) {
      if (room <= 0) return;
      room--;
    }
    next ??= copyOf(current);
    next[key] = value;
  };
  for (const [key, value] of Object.entries(update.setOnce))
    if (!(key in current) && !(next && key in next)) write(key, value);
  for (const [key, value] of Object.entries(update.set)) {
    const before = next ? next[key] : current[key];
    if (!(key in (next ?? current)) || before !== value || typeof value === 'object')
      write(key, value);
  }
  for (const key of update.unset) {
    if (key in (next ?? current)) {
      next ??= copyOf(current);
      delete next[key];
    }
  }
  return next ?? current;
}

/** Ids PostHog refuses to merge on (capture.md §2.3): they would glue unrelated users together. */
const ILLEGAL_CASE_INSENSITIVE = new Set([
  'anonymous',
  'guest',
  'distinctid',
  'distinct_id',
  'id',
  'not_authenticated',
  'email',
  'undefined',
  'true',
  'false',
]);
const ILLEGAL_CASE_SENSITIVE = new Set([
  '[object Object]',
  'NaN',
  'None',
  'none',
  'null',
  '0',
  'undefined',
]);

export function isDistinctIdIllegal(id: string): boolean {
  const trimmed = id.trim();
  if (trimmed === '') return true;
  const unquoted = /^(['"])(.*)\1$/.exec(trimmed)?.[2] ?? trimmed;
  return (
    ILLEGAL_CASE_INSENSITIVE.has(unquoted.toLowerCase()) || ILLEGAL_CASE_SENSITIVE.has(unquoted)
  );
}
