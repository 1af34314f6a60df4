import type pg from 'pg';
import { z } from 'zod';
import { actionsReader } from '../../projections/actions/actionsReader.ts';
import type {
  FunnelInput,
  FunnelOrder,
  FunnelStep,
} from '../../projections/analytics/funnelReader.ts';
import { prepareHogQLFilters } from '../../projections/events/propertyFilters.ts';
import { fail, invalidInput } from '../../src/core/errors.ts';
import { withStepPersons } from '../actions/actionStepPersons.ts';
import { chartRange } from './insightDates.ts';
import { breakdownOf, entitiesOf, InsightQuery, intervalOf, seriesInput } from './insightParams.ts';

const UNIT_SECONDS = { minute: 60, hour: 3_600, day: 86_400, week: 604_800, month: 2_592_000 };

/** PostHog's funnel filter parameters, beside the insight filter's. */
export const FunnelQuery = InsightQuery.extend({
  funnel_order_type: z
    .enum(['ordered', 'strict', 'unordered'])
    .optional()
    .describe(
      'ordered (default): steps in order, other events between allowed; strict: no other event between steps; unordered: the steps in any order',
    ),
  funnel_window_interval: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .optional()
    .describe('conversion window length (default 14)'),
  funnel_window_interval_unit: z
    .enum(['minute', 'hour', 'day', 'week', 'month'])
    .optional()
    .describe('conversion window unit (default day; a month is 30 days)'),
  funnel_window_days: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .optional()
    .describe('legacy: the window in days'),
  funnel_step: z.coerce
    .number()
    .int()
    .min(-100)
    .max(100)
    .optional()
    .describe(
      'actors: n = persons who reached step n (1-based); −n = persons who dropped off before step n',
    ),
  funnel_step_breakdown: z
    .string()
    .max(1000)
    .optional()
    .describe(
      'actors: only this breakdown value: bare (`ads`), or JSON as PostHog\'s funnel links send it (`"ads"`, `["ads"]`, a number)',
    ),
  breakdown_limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(25)
    .describe(
      'breakdown values shown, most step-1 persons first; the others are summed as "Other"',
    ),
});
export type FunnelQuery = z.infer<typeof FunnelQuery>;

export function windowSeconds(q: FunnelQuery): number {
  if (q.funnel_window_interval !== undefined)
    return q.funnel_window_interval * UNIT_SECONDS[q.funnel_window_interval_unit ?? 'day'];
  return (q.funnel_window_days ?? 14) * UNIT_SECONDS.day;
}

export function funnelSteps(q: FunnelQuery): {
  steps: FunnelStep[];
  names: string[];
  order: FunnelOrder;
} {
  const entities = entitiesOf(q);
  if (entities.length < 2)
    fail(invalidInput('A funnel needs at least 2 steps in events.', 'events'));
  return {
    steps: entities.map((e) =>
      e.type === 'actions'
        ? { event: null, properties: e.properties, action: { id: Number(e.id) } }
        : { event: e.id, properties: e.properties },
    ),
    names: entities.map((e) => e.name),
    order: q.funnel_order_type ?? 'ordered',
  };
}

/**
 * The breakdown value `funnel_step_breakdown` names. PostHog reads the parameter as JSON when it
 * parses (its funnel links send `["ads"]`: a one-value list, as a breakdown value is a list in its
 * multi-property breakdowns) and as the bare text otherwise; a number stands for its text.
 */
export function stepBreakdownValue(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return raw;
  }
  if (Array.isArray(value) && value.length === 1) value = value[0];
  if (value === null) return undefined;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  return fail(
    invalidInput(
      'funnel_step_breakdown must be one breakdown value: text, or JSON text, a number or a one-value list.',
      'funnel_step_breakdown',
    ),
  );
}

/** A POST body (PostHog sends the filter as JSON): lists and objects as the JSON text the query holds. */
export function bodyAsQuery(body: unknown): Record<string, string> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body))
    fail(invalidInput('The body must be a JSON object of filter parameters.'));
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (v === undefined || v === null) continue;
    out[k] = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  return out;
}

/** GET reads the query; POST the query and the body (the body wins), as PostHog accepts both. */
export function parseFunnelRequest<S extends z.ZodType = typeof FunnelQuery>(
  query: unknown,
  body: unknown,
  schema: S = FunnelQuery as unknown as S,
): z.infer<S> {
  const parsed = schema.safeParse({ ...(query as Record<string, string>), ...bodyAsQuery(body) });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const attr = String(issue.path[0] ?? '');
    fail(invalidInput(`${attr || 'query'}: ${issue.message}`, attr || null));
  }
  return parsed.data;
}

/** The funnel reader's input: the steps, the range, the filters (person filters resolved). */
export async function funnelInput(
  pool: pg.Pool,
  projectId: number,
  now: Date,
  q: FunnelQuery,
): Promise<FunnelInput> {
  const range = chartRange(q, intervalOf(q), now);
  const { steps: named, order } = funnelSteps(q);
  await prepareHogQLFilters(...named.map((s) => s.properties));
  const actions = actionsReader(pool);
  const steps = await Promise.all(
    named.map(async (s) => {
      if (!s.action) return s;
      const row = await actions.get(projectId, s.action.id);
      if (!row)
        fail(invalidInput(`Action ${s.action.id} does not exist in this project.`, 'actions'));
      const steps = await withStepPersons(pool, projectId, now, row.steps);
      return { ...s, action: { id: s.action.id, steps } };
    }),
  );
  const every = { id: null, name: '', order: 0, math: 'total' as const, properties: undefined };
  const { event: _every, ...series } = await seriesInput(pool, projectId, now, q, every, range);
  const breakdown = await breakdownOf(pool, projectId, q);
  return {
    ...series,
    steps,
    order,
    windowSeconds: windowSeconds(q),
    ...(breakdown ? { breakdown, breakdownLimit: q.breakdown_limit } : {}),
  };
}
