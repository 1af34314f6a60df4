/** What the query → legacy filters mappings share (insightQuery.ts, funnelsRetentionPathsQueries.ts). */
export type QueryMapping =
  | { ok: true; filters: Record<string, unknown> }
  | { ok: false; detail: string };
/**
 * What a caller lets through beyond saved insights' mapping: `actions` takes `ActionsNode` series
 * (an action's id, checked when computed; `/query` computes at once, a saved insight later).
 */
export type MappingOptions = Readonly<{ actions?: boolean }>;

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
export const refuse = (detail: string): QueryMapping => ({ ok: false, detail });
/** A list given and not empty: a feature the engine does not compute was asked for. */
export const nonEmpty = (v: unknown) => Array.isArray(v) && v.length > 0;

/** `dateRange` and `properties`, as the legacy filters name them. */
export function rangeAndProperties(source: Record<string, unknown>): Record<string, unknown> {
  const filters: Record<string, unknown> = {};
  const range = source.dateRange;
  if (isObject(range)) {
    if (typeof range.date_from === 'string') filters.date_from = range.date_from;
    if (typeof range.date_to === 'string') filters.date_to = range.date_to;
  }
  if (source.properties !== undefined) filters.properties = source.properties;
  return filters;
}

/**
 * An `EventsNode` (or with `options.actions` an `ActionsNode`) as a legacy entity, or why not;
 * `maths` are the ones the kind computes.
 */
export function eventsEntity(
  node: unknown,
  at: string,
  maths: ReadonlySet<string>,
  options: MappingOptions = {},
): Record<string, unknown> | string {
  const action = options.actions === true && isObject(node) && node.kind === 'ActionsNode';
  if (!isObject(node) || (node.kind !== 'EventsNode' && !action))
    return `${at}: only EventsNode${options.actions ? ' and ActionsNode' : ''} series are supported.`;
  const math = node.math ?? 'total';
  if (typeof math !== 'string' || !maths.has(math))
    return `${at}.math: only ${[...maths].join(' and ')} are supported.`;
  const id = action ? node.id : (node.event ?? null);
  if (action && !Number.isSafeInteger(id)) return `${at}.id must be an action id.`;
  if (!action && id !== null && typeof id !== 'string')
    return `${at}.event must be an event name or null.`;
  const name = node.custom_name ?? node.name;
  return {
    id: action ? String(id) : id,
    type: action ? 'actions' : 'events',
    math,
    ...(typeof name === 'string' ? { name } : {}),
    ...(node.properties !== undefined ? { properties: node.properties } : {}),
  };
}

/** Legacy entities split as the filters list them: `events` and `actions`, each with its `order`. */
export function entityLists(entities: readonly Record<string, unknown>[]) {
  const ordered = entities.map((e, order): Record<string, unknown> => ({ ...e, order }));
  const actions = ordered.filter((e) => e.type === 'actions');
  return {
    events: ordered.filter((e) => e.type !== 'actions'),
    ...(actions.length > 0 ? { actions } : {}),
  };
}

/** `breakdownFilter` with one breakdown property as legacy `breakdown`, or why not. */
export function oneBreakdown(source: Record<string, unknown>): Record<string, unknown> | string {
  const breakdown = source.breakdownFilter;
  // checked first: `breakdowns` alone (PostHog's newer shape) is a breakdown too, not none
  if (isObject(breakdown) && nonEmpty(breakdown.breakdowns))
    return 'breakdownFilter.breakdowns (several breakdowns) is not supported.';
  if (!isObject(breakdown) || breakdown.breakdown === undefined || breakdown.breakdown === null)
    return {};
  if (typeof breakdown.breakdown !== 'string')
    return 'breakdownFilter.breakdown must be one property name.';
  return {
    breakdown: breakdown.breakdown,
    breakdown_type: breakdown.breakdown_type ?? 'event',
    ...(breakdown.breakdown_limit !== undefined
      ? { breakdown_limit: breakdown.breakdown_limit }
      : {}),
  };
}
