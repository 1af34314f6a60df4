import { v7 } from 'uuid';
import { isUuid } from '../../src/core/uuid.ts';

/**
 * UUIDv7 (RFC 9562) for events that arrive without a uuid, as capture-rs does: 48-bit Unix ms,
 * version 7, random bits from the uuid package's pooled generator (one syscall per many ids).
 */
export const uuidv7 = (now: Date = new Date()): string => v7({ msecs: now.getTime() });

// The spellings Python's uuid.UUID and Rust's Uuid::parse_str both read: hyphenated, 32 hex digits, braced, urn.
const SIMPLE = /^[0-9a-f]{32}$/i;

/** The canonical (lower-case, hyphenated) form of a client uuid, or null when it is not a UUID. */
export function parseUuid(value: string): string | null {
  let s = value.trim();
  if (s.toLowerCase().startsWith('urn:uuid:')) s = s.slice(9);
  else if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1);
  if (SIMPLE.test(s))
    s = `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  return isUuid(s) ? s.toLowerCase() : null;
}
