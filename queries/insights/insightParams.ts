/**
 * PostHog's legacy insight filter parameters (query string) → the analytics readers' inputs.
 * Names and meanings follow PostHog's `Filter` (posthog/models/filters): `events` / `actions`
 * (JSON lists of entities), `properties` (event and person property filters), `date_from`,
 * `date_to`, `interval`, `breakdown` (+ `breakdown_type`, `breakdown_value`), `entity_id`,
 * `entity_type`, `entity_math`.
 */
import type pg from 'pg';
import { z } from 'zod';
import type { Breakdown, Interval, SeriesInput } from '../../projections/analytics/analyticsSql.ts';
import {
  analyticsPersonsReader,
  PERSON_BREAKDOWN_MAX_PERSONS,
} from '../../projections/persons/analyticsPersonsReader.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import { resolvePersonFilters } from '../events/eventPersonFilters.ts';
import type { Range } from './insightDates.ts';

const json = (attr: string) => z.string().max(100_000).optional().describe(`${attr}: JSON text`);

/** The query parameters every insight endpoint reads. */
export const InsightQuery = z.object({
  events: json('events').describe(
    'JSON list of event entities `[{"id": "$pageview", "type": "events", "math": "total"|"dau", "properties": [...]}]`; `id` null means every event',
  ),
  actions: json('actions').describe(
    'JSON list of actions: hogstream has no actions, so it must be empty',
  ),
  properties: json('properties').describe(
    'JSON list (or AND/OR group) of event (`type: "event"`) and person (`type: "person"`) property filters, as the events list takes them',
  ),
  date_from: z
    .string()
    .max(64)
    .optional()
    .describe(
      'start: ISO 8601, relative (-7d, -24h, -2w, -1m, -1y), dStart, mStart, yStart or all; default -7d; aligned to the interval start',
    ),
  date_to: z
    .string()
    .max(64)
    .optional()
    .describe('end (inclusive; a bare date means its whole day); default now'),
  interval: z
    .enum(['hour', 'day', 'week', 'month'])
    .optional()
    .describe('bucket size, UTC; weeks start on Sunday; default day'),
  breakdown: z
    .string()
    .max(400)
    .optional()
    .describe('the property to break the series down by (an event or a person property)'),
  breakdown_type: z
    .enum(['event', 'person'])
    .optional()
    .describe(
      'event (default): `breakdown` is an event property; person: a property of the event’s person now (after merges)',
    ),
  breakdown_value: z
    .string()
    .max(1000)
    .optional()
    .describe(
      'actors: only events with this breakdown value (empty: events, or persons, without the property)',
    ),
  entity_id: z
    .string()
    .max(400)
    .optional()
    .describe('actors: which series (the event name); default the first'),
  entity_type: z.enum(['events']).optional().describe('actors: the series’ kind (events only)'),
  entity_math: z
    .string()
    .max(40)
    .optional()
    .describe('actors: the series’ math (ignored: actors are the persons behind the point)'),
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('actors per page'),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0).describe('actors to skip'),
  format: z.enum(['json', 'csv']).optional().describe('csv: the actors as a CSV file'),
});
export type InsightQuery = z.infer<typeof InsightQuery>;

export type Entity = {
  id: string | null;
  name: string;
  order: number;
  math: 'total' | 'dau';
  properties: unknown;
};

function parseJson(text: string | undefined, attr: string): unknown {
  if (text === undefined || text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return fail(invalidInput(`${attr} is not valid JSON.`, attr));
  }
}

/** The event entities (series) of the request, in `order`. */
export function entitiesOf(q: InsightQuery): Entity[] {
  const actions = parseJson(q.actions, 'actions');
  if (Array.isArray(actions) && actions.length > 0)
    fail(invalidInput('Actions are not supported: use events.', 'actions'));
  const events = parseJson(q.events, 'events');
  if (events === undefined || (Array.isArray(events) && events.length === 0))
    fail(invalidInput('events is required: a JSON list like [{"id": "$pageview"}].', 'events'));
  if (!Array.isArray(events) || events.length > 20)
    fail(invalidInput('events must be a JSON list of at most 20 entities.', 'events'));
  return events
    .map((e, i): Entity => {
      if (e === null || typeof e !== 'object' || Array.isArray(e))
        fail(invalidInput(`events[${i}] must be an object.`, 'events'));
      const o = e as Record<string, unknown>;
      if (o.id !== null && o.id !== undefined && typeof o.id !== 'string')
        fail(invalidInput(`events[${i}].id must be an event name or null.`, 'events'));
      const math = o.math ?? 'total';
      if (math !== 'total' && math !== 'dau')
        fail(invalidInput(`events[${i}].math: only total and dau are supported.`, 'events'));
      const id = (o.id as string | null | undefined) ?? null;
      return {
        id,
        name: typeof o.name === 'string' ? o.name : (id ?? 'All events'),
        order: typeof o.order === 'number' ? o.order : i,
        math,
        properties: o.properties,
      };
    })
    .sort((a, b) => a.order - b.order);
}

/** The series an actors request is about: `entity_id`, else the first entity. */
export function entityOf(q: InsightQuery): Entity {
  const all = entitiesOf(q);
  if (q.entity_id === undefined) return all[0]!;
  return (
    all.find((e) => e.id === q.entity_id) ?? {
      id: q.entity_id,
      name: q.entity_id,
      order: 0,
      math: 'total',
      properties: undefined,
    }
  );
}

const asList = (f: unknown): unknown[] =>
  f === undefined || f === null ? [] : Array.isArray(f) ? f : [f];

export function intervalOf(q: InsightQuery): Interval {
  return q.interval ?? 'day';
}

/** The reader input for one entity over `range`: person filters resolved in Postgres first. */
export async function seriesInput(
  pool: pg.Pool,
  projectId: number,
  now: Date,
  q: InsightQuery,
  entity: Entity,
  range: Range,
): Promise<SeriesInput> {
  const filters = [...asList(parseJson(q.properties, 'properties')), ...asList(entity.properties)];
  const resolved = await resolvePersonFilters(pool, {
    projectId,
    now,
    properties: filters,
    where: undefined,
  });
  return {
    projectId,
    now,
    event: entity.id,
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    properties: resolved.properties,
    personIdSets: resolved.personIdSets,
  };
}

/**
 * The request's breakdown, if any: an event property, or a person property with every person's
 * current value read from the persons read model (400 past PERSON_BREAKDOWN_MAX_PERSONS persons).
 */
export async function breakdownOf(
  pool: pg.Pool,
  projectId: number,
  q: Pick<InsightQuery, 'breakdown' | 'breakdown_type'>,
): Promise<Breakdown | undefined> {
  if (q.breakdown === undefined || q.breakdown === '') return undefined;
  if (q.breakdown_type !== 'person') return { key: q.breakdown };
  const persons = await analyticsPersonsReader(pool).propertyValues(projectId, q.breakdown);
  if (persons === null)
    fail(
      invalidInput(
        `More than ${PERSON_BREAKDOWN_MAX_PERSONS} persons have ${q.breakdown}: break down by an event property.`,
        'breakdown',
      ),
    );
  return { key: q.breakdown, persons };
}
