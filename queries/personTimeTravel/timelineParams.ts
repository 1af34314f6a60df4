import { DomainFailure, invalidInput } from '../../src/core/errors.ts';

/**
 * Query parameters of GET persons/:id/properties_timeline/ (capture.md §3.10), parsed into what the
 * timeline needs. Times are handled in microseconds because PostHog's effective range ends at
 * 23:59:59.999999. Project time zone: UTC (projects have no time zone setting yet).
 */
export class TimelineParamError extends DomainFailure {
  constructor(attr: string, message: string) {
    super(invalidInput(message, attr));
    this.name = 'TimelineParamError';
  }

  get attr(): string | null {
    return this.error.attr;
  }
}

export type TimelineParams = {
  /** sorted person property keys whose value changes start a new point */
  crucialKeys: string[];
  /** event names to scan; null = every event */
  eventNames: string[] | null;
  fromUs: number;
  toUs: number;
};

export type RawTimelineQuery = Partial<
  Record<
    | 'events'
    | 'actions'
    | 'properties'
    | 'date_from'
    | 'date_to'
    | 'interval'
    | 'breakdown'
    | 'breakdown_type'
    | 'aggregation_group_type_index',
    string
  >
>;

const US_PER_MS = 1000;
const DAY_US = 86_400_000_000;
const HOUR_US = 3_600_000_000;
type Interval = 'hour' | 'day' | 'week' | 'month';

function json(raw: string | undefined, attr: string): unknown {
  if (raw === undefined || raw === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    throw new TimelineParamError(attr, `${attr} must be JSON`);
  }
}

/** Person keys of a property filter list or an AND/OR group ({type, values}), recursively. */
function personKeys(filter: unknown, into: Set<string>): void {
  if (Array.isArray(filter)) {
    for (const f of filter) personKeys(f, into);
    return;
  }
  if (typeof filter !== 'object' || filter === null) return;
  const f = filter as Record<string, unknown>;
  if (Array.isArray(f.values) && (f.type === 'AND' || f.type === 'OR'))
    return personKeys(f.values, into);
  if (f.type === 'person' && typeof f.key === 'string') into.add(f.key);
}

const startOfDayUs = (us: number) => Math.floor(us / DAY_US) * DAY_US;

/** ISO date/time, YYYY-MM-DD, or relative -Nh/-Nd/-Nw/-Nm/-Ny; `end` rounds dates to the day's last µs. */
function parseDate(
  raw: string,
  nowMs: number,
  end: boolean,
  attr: string,
): { us: number; dateOnly: boolean } {
  const rel = /^-(\d+)([hdwmy])$/.exec(raw);
  if (rel) {
    const n = Number(rel[1]);
    const now = new Date(nowMs);
    if (rel[2] === 'h')
      return { us: Math.floor((nowMs - n * 3_600_000) / 3_600_000) * HOUR_US, dateOnly: false };
    if (rel[2] === 'd') now.setUTCDate(now.getUTCDate() - n);
    if (rel[2] === 'w') now.setUTCDate(now.getUTCDate() - 7 * n);
    if (rel[2] === 'm') now.setUTCMonth(now.getUTCMonth() - n);
    if (rel[2] === 'y') now.setUTCFullYear(now.getUTCFullYear() - n);
    const day = startOfDayUs(now.getTime() * US_PER_MS);
    return { us: end ? day + DAY_US - 1 : day, dateOnly: true };
  }
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(raw) ? `${raw}T00:00:00Z` : raw);
  if (Number.isNaN(ms)) throw new TimelineParamError(attr, `${attr}: invalid date "${raw}"`);
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(raw);
  return { us: dateOnly && end ? ms * US_PER_MS + DAY_US - 1 : ms * US_PER_MS, dateOnly };
}

/** PostHog's persons-modal convention: date_from == date_to means one interval from date_from. */
function plusInterval(us: number, interval: Interval): number {
  if (interval === 'hour') return us + HOUR_US;
  const d = new Date(us / US_PER_MS);
  if (interval === 'day') d.setUTCDate(d.getUTCDate() + 1);
  if (interval === 'week') d.setUTCDate(d.getUTCDate() + 7);
  if (interval === 'month') d.setUTCMonth(d.getUTCMonth() + 1);
  return d.getTime() * US_PER_MS - 1;
}

export function parseTimelineQuery(q: RawTimelineQuery, nowMs: number): TimelineParams {
  const interval = (q.interval ?? 'day') as Interval;
  if (!['hour', 'day', 'week', 'month'].includes(interval))
    throw new TimelineParamError('interval', 'interval must be hour, day, week or month');
  if (q.aggregation_group_type_index !== undefined && q.aggregation_group_type_index !== '') {
    throw new TimelineParamError(
      'aggregation_group_type_index',
      'group properties timelines are not supported',
    );
  }
  const actions = json(q.actions, 'actions');
  if (Array.isArray(actions) && actions.length > 0)
    throw new TimelineParamError('actions', 'actions are not supported yet');

  const keys = new Set<string>();
  personKeys(json(q.properties, 'properties'), keys);
  const events = json(q.events, 'events');
  if (events !== undefined && !Array.isArray(events))
    throw new TimelineParamError('events', 'events must be a JSON list');
  let eventNames: string[] | null = null;
  let allEvents = false;
  for (const entity of (events ?? []) as Record<string, unknown>[]) {
    personKeys(entity?.properties, keys);
    // An entity with id null is "all events": no name filter at all.
    if (entity?.id === null || entity?.id === undefined) allEvents = true;
    else {
      eventNames ??= [];
      eventNames.push(String(entity.id));
    }
  }
  if (allEvents) eventNames = null;
  if (q.breakdown_type === 'person' && q.breakdown) {
    const b = q.breakdown.startsWith('[') ? json(q.breakdown, 'breakdown') : q.breakdown;
    for (const k of Array.isArray(b) ? b : [b]) if (typeof k === 'string') keys.add(k);
  }

  const from = parseDate(q.date_from || '-7d', nowMs, false, 'date_from');
  let toUs: number;
  if (q.date_from && q.date_to && q.date_from === q.date_to) toUs = plusInterval(from.us, interval);
  else toUs = parseDate(q.date_to || '-0d', nowMs, true, 'date_to').us;
  return { crucialKeys: [...keys].sort(), eventNames, fromUs: from.us, toUs };
}

/** Python's isoformat with UTC offset, as PostHog prints effective_date_from/to. */
export function isoformatUs(us: number): string {
  const ms = Math.floor(us / US_PER_MS);
  const micro = us - ms * US_PER_MS + (ms % 1000) * 1000;
  const base = new Date(ms).toISOString().slice(0, 19);
  return `${base}${micro === 0 ? '' : `.${String(micro).padStart(6, '0')}`}+00:00`;
}

/** DRF's datetime rendering: Z, milliseconds only when there are some. */
export const drfTimestamp = (iso: string): string =>
  new Date(iso).toISOString().replace('.000Z', 'Z');
