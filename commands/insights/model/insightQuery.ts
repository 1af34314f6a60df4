/**
 * A saved insight's `query` (PostHog's query schema) → the legacy `filters` the insight engine
 * computes. Only what maps exactly is taken: `InsightVizNode` (or its bare source) over a
 * `TrendsQuery`, `StickinessQuery` or `LifecycleQuery` whose series are `EventsNode`s with math
 * total or dau. Anything else is refused with the reason, so nothing is saved that would be
 * computed differently from what the client asked for.
 */
export type QueryMapping =
  | { ok: true; filters: Record<string, unknown> }
  | { ok: false; detail: string };

const KINDS = { TrendsQuery: 'TRENDS', StickinessQuery: 'STICKINESS', LifecycleQuery: 'LIFECYCLE' };
const MATHS = new Set(['total', 'dau']);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const refuse = (detail: string): QueryMapping => ({ ok: false, detail });

export function filtersOfQuery(query: Record<string, unknown>): QueryMapping {
  const source = query.kind === 'InsightVizNode' ? query.source : query;
  if (!isObject(source)) return refuse('query.source must be an object (a TrendsQuery).');
  const kind = String(source.kind);
  const insight = KINDS[kind as keyof typeof KINDS];
  if (insight === undefined)
    return refuse(
      `query kind ${kind} is not supported: saved insights take TrendsQuery, StickinessQuery or LifecycleQuery (in an InsightVizNode), or legacy filters.`,
    );
  if (!Array.isArray(source.series) || source.series.length === 0 || source.series.length > 20)
    return refuse('query.source.series must list 1 to 20 EventsNode series.');
  const events: Record<string, unknown>[] = [];
  for (const [i, node] of source.series.entries()) {
    if (!isObject(node) || node.kind !== 'EventsNode')
      return refuse(`query.source.series[${i}]: only EventsNode series are supported.`);
    const math = node.math ?? 'total';
    if (typeof math !== 'string' || !MATHS.has(math))
      return refuse(`query.source.series[${i}].math: only total and dau are supported.`);
    const event = node.event ?? null;
    if (event !== null && typeof event !== 'string')
      return refuse(`query.source.series[${i}].event must be an event name or null.`);
    const name = node.custom_name ?? node.name;
    events.push({
      id: event,
      type: 'events',
      order: i,
      math,
      ...(typeof name === 'string' ? { name } : {}),
      ...(node.properties !== undefined ? { properties: node.properties } : {}),
    });
  }
  const filters: Record<string, unknown> = { insight, events };
  const range = source.dateRange;
  if (isObject(range)) {
    if (typeof range.date_from === 'string') filters.date_from = range.date_from;
    if (typeof range.date_to === 'string') filters.date_to = range.date_to;
  }
  if (source.interval !== undefined) filters.interval = source.interval;
  if (source.properties !== undefined) filters.properties = source.properties;
  const breakdown = source.breakdownFilter;
  if (isObject(breakdown) && breakdown.breakdown !== undefined && breakdown.breakdown !== null) {
    if (kind !== 'TrendsQuery') return refuse(`${kind} takes no breakdownFilter.`);
    if (Array.isArray(breakdown.breakdowns) && breakdown.breakdowns.length > 0)
      return refuse('breakdownFilter.breakdowns (several breakdowns) is not supported.');
    if (typeof breakdown.breakdown !== 'string')
      return refuse('breakdownFilter.breakdown must be one property name.');
    filters.breakdown = breakdown.breakdown;
    filters.breakdown_type = breakdown.breakdown_type ?? 'event';
    if (breakdown.breakdown_limit !== undefined)
      filters.breakdown_limit = breakdown.breakdown_limit;
  }
  const display = isObject(source.trendsFilter) ? source.trendsFilter.display : undefined;
  if (typeof display === 'string') filters.display = display;
  return { ok: true, filters };
}
