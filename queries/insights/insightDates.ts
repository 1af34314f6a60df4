/**
 * Date ranges and interval buckets of the insight endpoints, in UTC (PostHog's legacy insight
 * parameters `date_from`, `date_to`, `interval`). Weeks start on Sunday (PostHog's default
 * `week_start_day`).
 */
import type { Interval } from '../../projections/analytics/analyticsSql.ts';
import { parseDateParam } from '../../projections/shared/dateParam.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';

/** Most intervals one range may hold (an hourly year is 8,784). */
export const MAX_INTERVALS = 10_000;

export function startOf(interval: Interval, d: Date): Date {
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  switch (interval) {
    case 'hour':
      return new Date(Date.UTC(y, m, d.getUTCDate(), d.getUTCHours()));
    case 'day':
      return new Date(Date.UTC(y, m, d.getUTCDate()));
    case 'week':
      return new Date(Date.UTC(y, m, d.getUTCDate() - d.getUTCDay()));
    case 'month':
      return new Date(Date.UTC(y, m, 1));
  }
}

export function addIntervals(interval: Interval, d: Date, n: number): Date {
  const r = new Date(d);
  if (interval === 'hour') r.setUTCHours(r.getUTCHours() + n);
  else if (interval === 'day') r.setUTCDate(r.getUTCDate() + n);
  else if (interval === 'week') r.setUTCDate(r.getUTCDate() + 7 * n);
  else r.setUTCMonth(r.getUTCMonth() + n);
  return r;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** `date_from`/`date_to` values: ISO, relative (`-7d`, `-24h`, `-2w`, `-1m`, `-1y`), `dStart`, `mStart`, `yStart`, `all`. */
function parseDate(text: string, now: Date, attr: string): Date {
  if (text === 'dStart') return startOf('day', now);
  if (text === 'mStart') return startOf('month', now);
  if (text === 'yStart') return new Date(Date.UTC(now.getUTCFullYear(), 0, 1));
  if (text === 'all') return new Date(Date.UTC(2000, 0, 1));
  const parsed = parseDateParam(text, now)?.replace(' ', 'T');
  const zoned =
    parsed !== undefined && (/[zZ]|[+-]\d{2}:?\d{2}$/.test(parsed) || DATE_ONLY.test(parsed));
  const at = parsed === undefined ? Number.NaN : Date.parse(zoned ? parsed : `${parsed}Z`);
  if (Number.isNaN(at))
    fail(
      invalidInput(
        `${attr} must be an ISO 8601 date, a relative date like -7d, dStart, mStart or all.`,
        attr,
      ),
    );
  return new Date(at);
}

export type Range = { from: Date; to: Date };

/** The exclusive end of a range whose `date_to` is inclusive: a bare date runs to the end of its day; default now. */
export function rangeEnd(dateTo: string | undefined, now: Date): Date {
  if (dateTo === undefined) return new Date(now.getTime() + 1);
  if (DATE_ONLY.test(dateTo)) return addIntervals('day', parseDate(dateTo, now, 'date_to'), 1);
  return new Date(parseDate(dateTo, now, 'date_to').getTime() + 1);
}

/**
 * The chart's range: `date_from` (default `-7d`) from the start of its interval; `date_to`
 * (default now) inclusive — a bare date means to the end of that day.
 */
export function chartRange(
  q: { date_from?: string | undefined; date_to?: string | undefined },
  interval: Interval,
  now: Date,
): Range {
  const from = startOf(interval, parseDate(q.date_from ?? '-7d', now, 'date_from'));
  const to = rangeEnd(q.date_to, now);
  if (to <= from) fail(invalidInput('date_to must be after date_from.', 'date_to'));
  if (buckets(interval, { from, to }, MAX_INTERVALS + 1).length > MAX_INTERVALS)
    fail(
      invalidInput(
        `The range holds more than ${MAX_INTERVALS} intervals: use a longer interval.`,
        'interval',
      ),
    );
  return { from, to };
}

/** One data point: the interval that holds `date_from` (default now), as PostHog's actors use it. */
export function pointRange(
  q: { date_from?: string | undefined },
  interval: Interval,
  now: Date,
): Range {
  const from = startOf(
    interval,
    q.date_from === undefined ? now : parseDate(q.date_from, now, 'date_from'),
  );
  return { from, to: addIntervals(interval, from, 1) };
}

/** The interval starts of a range, in order. */
export function buckets(interval: Interval, range: Range, max = MAX_INTERVALS): Date[] {
  const out: Date[] = [];
  for (
    let b = startOf(interval, range.from);
    b < range.to && out.length < max;
    b = addIntervals(interval, b, 1)
  )
    out.push(b);
  return out;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** PostHog's `days` entries: `YYYY-MM-DD`, or `YYYY-MM-DD HH:00:00` for hours. */
export function dayOf(interval: Interval, d: Date): string {
  const date = d.toISOString().slice(0, 10);
  return interval === 'hour' ? `${date} ${pad(d.getUTCHours())}:00:00` : date;
}

/** PostHog's `labels`: `3-Jan-2024`, `3-Jan-2024 14:00` for hours. */
export function labelOf(interval: Interval, d: Date): string {
  const day = `${d.getUTCDate()}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()}`;
  return interval === 'hour' ? `${day} ${pad(d.getUTCHours())}:00` : day;
}
