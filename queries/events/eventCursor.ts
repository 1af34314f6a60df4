/**
 * The `next` links of the events list (capture.md §4.2) and its list parameters. Dates are read by
 * `parseDateParam` (projections/shared/dateParam.ts), shared with the filters that compile them.
 *
 * `next` is a timestamp cursor when the list is ordered by timestamp alone (the default
 * `-timestamp`, or `timestamp`): the request's absolute URL with `before` (descending) or `after`
 * (ascending) set to the last returned event's timestamp. Unlike PostHog's, the link also carries
 * `before_uuid` / `after_uuid`, the last event's id, so events sharing that timestamp across a page
 * boundary are neither skipped nor repeated (the order is timestamp, then uuid). `offset` is
 * dropped from a cursor link: the cursor replaces it. Every other ordering, and aggregate
 * selects, page with `offset` instead.
 */

/** The absolute URL of this request (scheme and host as the client used them). */
export function requestUrl(protocol: string, host: string | undefined, url: string): URL {
  return new URL(url, `${protocol}://${host ?? 'localhost'}`);
}

/** Next page of a timestamp-ordered list, after the last returned event. */
export function timestampCursorUrl(
  base: URL,
  descending: boolean,
  last: { timestamp: string; uuid: string },
): string {
  const url = new URL(base);
  const [bound, other] = descending ? ['before', 'after'] : ['after', 'before'];
  url.searchParams.set(bound, last.timestamp);
  url.searchParams.set(`${bound}_uuid`, last.uuid);
  url.searchParams.delete(`${other}_uuid`);
  url.searchParams.delete('offset');
  return url.toString();
}

/** Next page by offset (custom orderings and aggregate selects). */
export function offsetUrl(base: URL, offset: number, limit: number, step = limit): string {
  const url = new URL(base);
  url.searchParams.set('offset', String(offset + step));
  url.searchParams.set('limit', String(limit));
  return url.toString();
}

/**
 * A list parameter given as a JSON array of strings (PostHog's `select`, `where`, `orderBy`);
 * a repeated parameter is accepted too. Returns an error message instead when it is neither.
 */
export function stringList(
  raw: string | string[] | undefined,
  name: string,
): string[] | { error: string } | undefined {
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
    else if (Array.isArray(parsed) && parsed.every((x) => typeof x === 'string'))
      out.push(...(parsed as string[]));
    else return { error: `${name} must be a JSON array of strings` };
  }
  return out;
}
