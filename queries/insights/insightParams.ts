/**
 * PostHog's legacy insight filter parameters (query string) → the analytics readers' inputs.
 * Names and meanings follow PostHog's `Filter` (posthog/models/filters): `events` / `actions`
 * (JSON lists of entities), `properties` (event and person property filters), `date_from`,
 * `date_to`, `interval`, `breakdown` (+ `breakdown_type`, `breakdown_value`), `entity_id`,
 * `entity_type`, `entity_math`.
 */
import type pg from 'pg';
import { z } from 'zod';
import type { ActionStep } from '../../commands/actions/model/action.ts';
import { actionsReader } from '../../projections/actions/actionsReader.ts';
import type { Breakdown, Interval, SeriesInput } from '../../projections/analytics/analyticsSql.ts';
import {
  analyticsPersonsReader,
  PERSON_BREAKDOWN_MAX_PERSONS,
} from '../../projections/persons/analyticsPersonsReader.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import { withStepPersons } from '../actions/actionStepPersons.ts';
import { resolvePersonFilters } from '../events/eventPersonFilters.ts';
import type { Range } from './insightDates.ts';

const json = (attr: string) => z.string().max(100_000).optional().describe(`${attr}: JSON text`);

/** The query parameters every insight endpoint reads. */
export const InsightQuery = z.object({
  events: json('events').describe(
    'JSON list of event entities `[{"id": "$pageview", "type": "events", "math": "total"|"dau", "properties": [...]}]`; `id` null means every event',
  ),
  actions: json('actions').describe(
    'JSON list of action entities `[{"id": <action id>, "type": "actions", "math", "properties"}]`: the events matching any step of the action (trend, stickiness, lifecycle and funnel series, and their persons)',
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
  entity_type: z
    .enum(['events', 'actions'])
    .optional()
    .describe('actors: the series’ kind (`entity_id` is an event name or an action id)'),
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
  /** an event name (null: every event), or for an action its id as text */
  id: string | null;
  /** absent: events */
  type?: 'events' | 'actions';
  name: string;
  order: number;
  math: 'total' | 'dau';
  properties: unknown;
  /** an action's steps and name, read by `withActions` (or by `seriesInput` when absent) */
  steps?: readonly ActionStep[];
};

function parseJson(text: string | undefined, attr: string): unknown {
  if (text === undefined || text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return fail(invalidInput(`${attr} is not valid JSON.`, attr));
  }
}

const listOf = (q: InsightQuery, attr: 'events' | 'actions'): unknown[] => {
  const list = parseJson(q[attr], attr) ?? [];
  if (!Array.isArray(list) || list.length > 20)
    fail(invalidInput(`${attr} must be a JSON list of at most 20 entities.`, attr));
  return list;
};

/**
 * The entities (series) of the request, events and actions together, in `order` (PostHog's
 * Filter.entities: events first, then actions, each with its `order`).
 */
export function entitiesOf(q: InsightQuery): Entity[] {
  const events = listOf(q, 'events');
  const actions = listOf(q, 'actions');
  if (events.length === 0 && actions.length === 0)
    fail(invalidInput('events is required: a JSON list like [{"id": "$pageview"}].', 'events'));
  if (events.length + actions.length > 20)
    fail(invalidInput('At most 20 entities in events and actions together.', 'events'));
  const entity = (e: unknown, i: number, attr: 'events' | 'actions'): Entity => {
    if (e === null || typeof e !== 'object' || Array.isArray(e))
      fail(invalidInput(`${attr}[${i}] must be an object.`, attr));
    const o = e as Record<string, unknown>;
    const math = o.math ?? 'total';
    if (math !== 'total' && math !== 'dau')
      fail(invalidInput(`${attr}[${i}].math: only total and dau are supported.`, attr));
    const common = {
      order: typeof o.order === 'number' ? o.order : i,
      math,
      properties: o.properties,
    } as const;
    if (attr === 'actions') {
      const id = typeof o.id === 'string' && /^\d+$/.test(o.id) ? Number(o.id) : o.id;
      if (!Number.isSafeInteger(id))
        fail(invalidInput(`actions[${i}].id must be an action id.`, attr));
      const name = typeof o.name === 'string' ? o.name : String(id);
      return { id: String(id), type: 'actions', name, ...common };
    }
    if (o.id !== null && o.id !== undefined && typeof o.id !== 'string')
      fail(invalidInput(`events[${i}].id must be an event name or null.`, 'events'));
    const id = (o.id as string | null | undefined) ?? null;
    const name = typeof o.name === 'string' ? o.name : (id ?? 'All events');
    return { id, type: 'events', name, ...common };
  };
  return [
    ...events.map((e, i) => entity(e, i, 'events')),
    ...actions.map((e, i) => entity(e, i, 'actions')),
  ].sort((a, b) => a.order - b.order);
}

/**
 * The action entities with their steps (and their name when the request gave none), read from
 * the actions read model; an action not of this project is a 400, as PostHog refuses it.
 */
export async function withActions(
  pool: pg.Pool,
  projectId: number,
  entities: readonly Entity[],
): Promise<Entity[]> {
  const actions = actionsReader(pool);
  return Promise.all(
    entities.map(async (e) => {
      if (e.type !== 'actions' || e.steps) return e;
      const row = await actions.get(projectId, Number(e.id));
      if (!row) fail(invalidInput(`Action ${e.id} does not exist in this project.`, 'actions'));
      return { ...e, steps: row.steps, name: e.name === e.id ? row.name : e.name };
    }),
  );
}

/** The series an actors request is about: `entity_id`, else the first entity. */
export function entityOf(q: InsightQuery): Entity {
  const all = entitiesOf(q);
  if (q.entity_id === undefined) return all[0]!;
  const type = q.entity_type === 'actions' ? 'actions' : 'events';
  return (
    all.find((e) => e.id === q.entity_id && (q.entity_type === undefined || e.type === type)) ?? {
      id: q.entity_id,
      type,
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
  const [resolvedEntity] = await withActions(pool, projectId, [entity]);
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
    event: entity.type === 'actions' ? null : entity.id,
    ...(resolvedEntity?.steps
      ? { actionSteps: await withStepPersons(pool, projectId, now, resolvedEntity.steps) }
      : {}),
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
