/**
 * Date parameters and date filter values of the events and persons lists: ISO 8601 or relative
 * dates, checked here and then handed to the SQL builders as text their database reads exactly.
 */

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/;
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
  const value = text
    .trim()
    .replace(/(\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}(?::?\d{2})?)$/, '$1+$2');
  const relative = RELATIVE.exec(value);
  if (relative) {
    const n = Number(relative[1]);
    const unit = relative[2]!;
    const hours = { h: 1, d: 24, w: 24 * 7 }[unit as 'h' | 'd' | 'w'];
    const at =
      hours !== undefined
        ? new Date(now.getTime() - n * hours * 3_600_000)
        : shiftMonths(now, unit === 'm' ? n : 12 * n);
    return at.toISOString();
  }
  const m = ISO.exec(value);
  if (!m) return null;
  const [, , month, day, hour = '0', minute = '0', second = '0'] = m;
  const valid =
    Number(month) >= 1 &&
    Number(month) <= 12 &&
    Number(day) >= 1 &&
    Number(day) <= 31 &&
    Number(hour) < 24 &&
    Number(minute) < 60 &&
    Number(second) < 60;
  return valid ? value : null;
}
