import { z } from 'zod';
import type { PropertyGroup } from './cohort.ts';

/**
 * A cohort's property filter, as PostHog stores dynamic cohorts: nested AND/OR groups of person
 * properties (the operators of flags.md), references to other cohorts, and behavioural filters:
 * `{type: "behavioral", value: "performed_event", key: <event>, time_value, time_interval,
 * operator_value?}` — did the event (at least `operator_value` times, default 1) in the last
 * `time_value` `time_interval`s. With `event_type: "actions"`, `key` is an action id: the events
 * matching any of its steps.
 */
const BehavioralProperty = z
  .object({
    type: z.literal('behavioral'),
    value: z.literal('performed_event', {
      error: 'behavioural filters: only value "performed_event" is supported',
    }),
    key: z
      .union([z.string().min(1).max(400), z.number().int()])
      .describe('the event name, or with event_type "actions" the action id'),
    event_type: z.enum(['events', 'actions']).optional(),
    time_value: z.coerce.number().int().min(1).max(3650),
    time_interval: z.enum(['hour', 'day', 'week', 'month', 'year']),
    operator: z.enum(['gte', 'exact', 'lte']).optional(),
    operator_value: z.coerce.number().int().min(0).max(1_000_000).optional(),
    negation: z.boolean().optional(),
  })
  .catchall(z.unknown())
  .refine((p) => p.event_type === 'actions' || typeof p.key === 'string', {
    message:
      'behavioural filters: key is an event name (or an action id with event_type "actions")',
  })
  .refine((p) => p.event_type !== 'actions' || /^\d+$/.test(String(p.key)), {
    message: 'behavioural filters: with event_type "actions", key is an action id',
  });
export type BehavioralProperty = z.infer<typeof BehavioralProperty>;

const CohortProperty = z
  .object({
    key: z.union([z.string().min(1).max(400), z.number()]),
    type: z.enum(['person', 'cohort'], {
      error: 'type must be "person", "cohort" or "behavioral"',
    }),
    value: z.unknown().optional(),
    operator: z.string().max(40).nullable().optional(),
    negation: z.boolean().optional(),
  })
  .catchall(z.unknown());

// Registered under an id so the OpenAPI document holds the recursion as a component of its own
// (`#/components/schemas/CohortPropertyGroupInput`); unnamed, zod put it in a `__shared` $defs
// that the document's pointers could not reach.
export const CohortPropertyGroup: z.ZodType<PropertyGroup> = z
  .lazy(() =>
    z.object({
      type: z.enum(['AND', 'OR']),
      values: z.array(z.union([CohortPropertyGroup, BehavioralProperty, CohortProperty])).max(100),
    }),
  )
  .meta({ id: 'CohortPropertyGroup' });

/**
 * Most behavioural filters one cohort may hold: each is a ClickHouse query over the project's
 * events at every calculation (past it: 400 on `filters`).
 */
export const MAX_BEHAVIOURAL_FILTERS = 20;

const behaviouralCount = (group: PropertyGroup): number =>
  group.values.reduce<number>(
    (n, item) =>
      n +
      ('values' in item
        ? behaviouralCount(item as PropertyGroup)
        : (item as { type?: unknown }).type === 'behavioral'
          ? 1
          : 0),
    0,
  );

export const CohortFiltersInput = z
  .object({ properties: CohortPropertyGroup })
  .superRefine((filters, ctx) => {
    const n = behaviouralCount(filters.properties);
    if (n > MAX_BEHAVIOURAL_FILTERS)
      ctx.addIssue({
        code: 'custom',
        message: `A cohort holds at most ${MAX_BEHAVIOURAL_FILTERS} behavioural filters (this one ${n}).`,
      });
  })
  .describe('`{properties: {type: "AND" | "OR", values: [property or group, …]}}`');
