/**
 * Date parameters, timestamps and the `next` links of the events list (capture.md §4.2).
 *
 * `next` is a timestamp cursor when the list is ordered by timestamp alone (the default
 * `-timestamp`, or `timestamp`): the request's absolute URL with `before` (descending) or `after`
 * (ascending) set to the last returned event's timestamp. Unlike PostHog's, the link also carries
 * `before_uuid` / `after_uuid`, the last event's id, so events sharing that timestamp across a page
 * boundary are neither skipped nor repeated (the order is timestamp, then uuid). `offset` is
 * dropped from a cursor link: the cursor replaces it. Every other ordering, and aggregate
 * selects, page with `offset` instead.
 */

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/;
const RELATIVE = /^-?(\d{1,4})([hdwmy])$/;

function shiftMonths(now: Date, months: number): Date {
  const d = new Date(now);
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() - months);
  const monthEnd = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, monthEnd));
  return d;
}

/**
 * An ISO 8601 date or date-time (offset optional, UTC when absent; up to 9 fractional digits),
 * or a relative date like `-7d` (h, d, w, m, y; the sign is optional, the date is in the past):
 * returns text ClickHouse's `parseDateTime64BestEffort` reads exactly, or null when invalid.
 */
export function parseDateParam(text: string, now: Date): string | null {
  // an unencoded "+00:00" in a query string arrives as " 00:00"
  const value = text.trim().replace(/(\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}(?::?\d{2})?)$/, '$1+$2');
  const relative = RELATIVE.exec(value);
  if (relative) {
    const n = Number(relative[1]);
    const unit = relative[2]!;
    const hours = { h: 1, d: 24, w: 24 * 7 }[unit as 'h' | 'd' | 'w'];
    const at = hours !== undefined ? new Date(now.getTime() - n * hours * 3_600_000) : shiftMonths(now, unit === 'm' ? n : 12 * n);
    return at.toISOString();
  }
  const m = ISO.exec(value);
  if (!m) return null;
  const [, , month, day, hour = '0', minute = '0', second = '0'] = m;
  const valid =
    Number(month) >= 1 && Number(month) <= 12 && Number(day) >= 1 && Number(day) <= 31 &&
    Number(hour) < 24 && Number(minute) < 60 && Number(second) < 60;
  return valid ? value : null;
}

/** ClickHouse `DateTime64(6, 'UTC')` text → PostHog's `2023-09-15T09:15:02.325000+00:00`. */
export function formatTimestamp(clickhouseText: string): string {
  return `${clickhouseText.replace(' ', 'T')}+00:00`;
}

/** The absolute URL of this request (scheme and host as the client used them). */
export function requestUrl(protocol: string, host: string | undefined, url: string): URL {
  return new URL(url, `${protocol}://${host ?? 'localhost'}`);
}

/** Next page of a timestamp-ordered list, after the last returned event. */
export function timestampCursorUrl(base: URL, descending: boolean, last: { timestamp: string; uuid: string }): string {
  const url = new URL(base);
  const [bound, other] = descending ? ['before', 'after'] : ['after', 'before'];
  url.searchParams.set(bound, last.timestamp);
  url.searchParams.set(`${bound}_uuid`, last.uuid);
  url.searchParams.delete(`${other}_uuid`);
  url.searchParams.delete('offset');
  return url.toString();
}

/** Next page by offset (custom orderings and aggregate selects). */
export function offsetUrl(base: URL, offset: number, limit: number): string {
  const url = new URL(base);
  url.searchParams.set('offset', String(offset + limit));
  url.searchParams.set('limit', String(limit));
  return url.toString();
}

/**
 * A list parameter given as a JSON array of strings (PostHog's `select`, `where`, `orderBy`);
 * a repeated parameter is accepted too. Returns an error message instead when it is neither.
 */
export function stringList(raw: string | string[] | undefined, name: string): string[] | { error: string } | undefined {
  if (raw === undefined) return undefined;
  const values = Array.isArray(raw) ? raw : [raw];
  const out: string[] = [];
  for (const value of values) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      return { error: `${name} must be a JSON array of strings, e.g. ${name}=["event"]` };
    }
    if (typeof parsed === 'string') out.push(parsed);
    else if (Array.isArray(parsed) && parsed.every((x) => typeof x === 'string')) out.push(...(parsed as string[]));
    else return { error: `${name} must be a JSON array of strings` };
  }
  return out;
}
