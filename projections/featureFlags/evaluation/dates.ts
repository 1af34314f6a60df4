/**
 * Dates for `is_date_before` / `is_date_after` / `is_date_exact` (flags.md §3.3), deterministic:
 * - relative filters `-6h`, `1d`, `02w`, `1m`, `1y` (sign ignored, N < 10000) are *now* minus N
 *   units, with the injected clock; months and years use calendar arithmetic and clamp the day to
 *   the month's end, step by step, as posthog-node 5 does;
 * - ISO-like text (`2022-04-05`, `2022-04-05 12:34:12 +01:00`, `…T…Z`, `… GMT`) is parsed here;
 *   without a zone it is UTC (posthog-node uses the host's zone for a date-time without one);
 * - other text goes to `Date.parse` (RFC 2822 and the like); numbers are milliseconds since the
 *   epoch, as in the JavaScript SDKs.
 */

const RELATIVE = /^-?(\d+)([a-z])$/;
const ISO_LIKE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Relative filter value → instant, or undefined when the text is not a relative date. */
export function relativeDate(text: string, now: () => Date): Date | undefined {
  const m = RELATIVE.exec(text);
  if (!m) return undefined;
  const n = Number.parseInt(m[1]!, 10);
  if (n >= 10000) return undefined;
  const d = new Date(now().getTime());
  switch (m[2]) {
    case 'h':
      d.setUTCHours(d.getUTCHours() - n);
      return d;
    case 'd':
      d.setUTCDate(d.getUTCDate() - n);
      return d;
    case 'w':
      d.setUTCDate(d.getUTCDate() - n * 7);
      return d;
    case 'm':
      subtractMonths(d, n);
      return d;
    case 'y': {
      const month = d.getUTCMonth();
      // Feb 29 minus a year clamps to Feb 28 (the year before a leap year is never one).
      const day = n > 0 && month === 1 && d.getUTCDate() === 29 ? 28 : d.getUTCDate();
      d.setUTCFullYear(d.getUTCFullYear() - n, month, day);
      return d;
    }
    default:
      return undefined;
  }
}

// posthog-node clamps after every month step: March 31 − 1m is Feb 28, − 2m is Jan 28.
function subtractMonths(d: Date, months: number): void {
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  let day = d.getUTCDate();
  for (let step = 1; step <= months && day > 28; step++) {
    day = Math.min(day, new Date(Date.UTC(year, month - step + 1, 0)).getUTCDate());
  }
  d.setUTCFullYear(year, month - months, day);
}

function offsetMinutes(zone: string | undefined): number {
  if (zone === undefined || /^(z|utc|gmt)$/i.test(zone)) return 0;
  const digits = zone.replace(':', '');
  const sign = digits.startsWith('-') ? -1 : 1;
  const hours = Number(digits.slice(1, 3));
  const minutes = digits.length > 3 ? Number(digits.slice(3, 5)) : 0;
  return sign * (hours * 60 + minutes);
}

/** Epoch ms; null for ISO-shaped text that is no date (2022-02-31); undefined for other text. */
function parseIsoLike(text: string): number | null | undefined {
  const m = ISO_LIKE.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '0', zone] = m;
  const month = Number(mo) - 1;
  const day = Number(d);
  const ms = Date.UTC(Number(y), month, day, Number(h), Number(mi), Number(s));
  const check = new Date(ms);
  // Reject 2022-02-31 and 25:00 rather than letting Date.UTC roll them over.
  const outOfRange = Number(h) > 23 || Number(mi) > 59 || Number(s) > 59;
  if (outOfRange || check.getUTCMonth() !== month || check.getUTCDate() !== day) return null;
  return ms + Math.floor(Number(`0.${frac}`) * 1000) - offsetMinutes(zone) * 60_000;
}

/** A date value (property or absolute filter) → epoch ms, or undefined when it is not a date. */
export function parseDate(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  const iso = parseIsoLike(text);
  if (iso !== undefined) return iso ?? undefined;
  const parsed = Date.parse(text);
  return Number.isNaN(parsed) ? undefined : parsed;
}

/** A filter value: relative first, then absolute; undefined when it is not a date. */
export function parseDateFilter(value: unknown, now: () => Date): number | undefined {
  if (typeof value === 'boolean') return undefined;
  const relative = typeof value === 'string' ? relativeDate(value, now) : undefined;
  return relative !== undefined ? relative.getTime() : parseDate(value);
}
