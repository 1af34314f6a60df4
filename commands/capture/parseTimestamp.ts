/**
 * Time values as clients send them (capture.md §2.5): RFC 3339, `+HH` / `+HHMM` offsets, date only, a space instead of
 * the `T` (api-spec: "a form with a space between date and time and fractional seconds also appears"), civil time
 * without a zone (UTC), RFC 2822, and numeric epochs in seconds or milliseconds.
 *
 * Hand-written because `Date.parse` is both too lax (`Date.parse("1")` is 2001) and engine-specific for anything that is
 * not strict ISO; it is only used below for strings already shaped like RFC 2822.
 */

const ISO_LIKE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;
const RFC_2822 =
  /^(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}\s+\d{1,2}:\d{2}(?::\d{2})?\s*(?:[+-]\d{4}|UT|UTC|GMT|Z|[ECMP][SD]T)?$/;
const NUMERIC = /^-?\d+(?:\.\d+)?$/;

/** Django's `_` rule, used for every epoch: up to 11 integer digits (< 1e11) are seconds, more are milliseconds. */
export function epochToDate(n: number): Date | null {
  if (!Number.isFinite(n)) return null;
  const ms = Math.abs(n) < 1e11 ? n * 1000 : n;
  const d = new Date(Math.round(ms));
  return Number.isNaN(d.getTime()) ? null : d;
}

/** A Date for a client time value, or null when it does not parse. Accepts strings and JSON numbers. */
export function parseCaptureTimestamp(value: unknown): Date | null {
  if (typeof value === 'number') return epochToDate(value);
  if (typeof value !== 'string') return null;
  let s = value.trim();
  if (s === '') return null;
  if (NUMERIC.test(s)) return epochToDate(Number(s));
  // "2024-06-02 02:00:00 UTC" (Ruby / SQL dumps): a trailing zone name means UTC.
  const named = /\s*(?:UTC|GMT)$/i.exec(s);
  if (named && ISO_LIKE.test(s.slice(0, named.index))) s = `${s.slice(0, named.index)}Z`;
  const m = ISO_LIKE.exec(s);
  if (m) return fromParts(m);
  if (RFC_2822.test(s)) {
    const t = Date.parse(s);
    return Number.isNaN(t) ? null : new Date(t);
  }
  return null;
}

function fromParts(m: RegExpExecArray): Date | null {
  const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', z, sign, oh, om = '0'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(sec);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const ms = Number(frac.slice(0, 3).padEnd(3, '0'));
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 onto 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCMonth() !== month - 1) return null; // 31 April, 30 February…
  date.setUTCHours(hour, minute, second, ms);
  if (!z && sign) {
    const offsetMinutes = Number(oh) * 60 + Number(om);
    if (Number(oh) > 23 || Number(om) > 59) return null;
    date.setTime(date.getTime() - (sign === '-' ? -1 : 1) * offsetMinutes * 60_000);
  }
  return date;
}
