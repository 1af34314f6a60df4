/**
 * `FunnelsQuery`, `RetentionQuery` and `PathsQuery` → the legacy filters `insights/funnel/`,
 * `insights/retention/` and `insights/path/` take (PostHog's own filter_to_query, read backwards).
 * What those engines do not compute (exclusions, other visualisations, cumulative retention, path
 * cleaning and groupings, actions…) is refused with the field that asked for it.
 */
import {
  entityLists,
  eventsEntity,
  isObject,
  type MappingOptions,
  nonEmpty,
  oneBreakdown,
  type QueryMapping,
  rangeAndProperties,
  refuse,
} from './insightQueryParts.ts';

const TOTAL = new Set(['total']);
const given = (v: unknown) => v !== undefined && v !== null;
/** The filter object of a kind (`funnelsFilter`…), empty when absent. */
const part = (source: Record<string, unknown>, key: string): Record<string, unknown> =>
  isObject(source[key]) ? source[key] : {};
/** Copies the fields given, renamed: `{queryName: legacyName}`. */
function renamed(from: Record<string, unknown>, names: Record<string, string>) {
  const out: Record<string, unknown> = {};
  for (const [name, legacy] of Object.entries(names))
    if (given(from[name])) out[legacy] = from[name];
  return out;
}

export function funnelsFilters(
  source: Record<string, unknown>,
  options: MappingOptions = {},
): QueryMapping {
  if (!Array.isArray(source.series) || source.series.length < 2 || source.series.length > 20)
    return refuse('query.source.series must list 2 to 20 EventsNode steps.');
  const steps: Record<string, unknown>[] = [];
  for (const [i, node] of source.series.entries()) {
    const entity = eventsEntity(node, `query.source.series[${i}]`, TOTAL, options);
    if (typeof entity === 'string') return refuse(entity);
    const { math: _math, ...step } = entity;
    steps.push(step);
  }
  const f = part(source, 'funnelsFilter');
  if (given(f.funnelVizType) && f.funnelVizType !== 'steps')
    return refuse('funnelsFilter.funnelVizType: only steps is computed.');
  if (nonEmpty(f.exclusions)) return refuse('funnelsFilter.exclusions are not supported.');
  if (given(f.breakdownAttributionType) && f.breakdownAttributionType !== 'first_touch')
    return refuse('funnelsFilter.breakdownAttributionType: only first_touch is computed.');
  if (given(f.funnelAggregateByHogQL) || given(source.aggregation_group_type_index))
    return refuse('funnels aggregate by person only.');
  const breakdown = oneBreakdown(source);
  if (typeof breakdown === 'string') return refuse(breakdown);
  return {
    ok: true,
    filters: {
      insight: 'FUNNELS',
      ...entityLists(steps),
      ...rangeAndProperties(source),
      ...(given(source.interval) ? { interval: source.interval } : {}),
      ...breakdown,
      ...renamed(f, {
        funnelOrderType: 'funnel_order_type',
        funnelWindowInterval: 'funnel_window_interval',
        funnelWindowIntervalUnit: 'funnel_window_interval_unit',
      }),
    },
  };
}

/** A retention entity (`targetEntity`, `returningEntity`) as the legacy JSON entity. */
function retentionEntity(e: unknown, at: string): Record<string, unknown> | string {
  if (!isObject(e)) return `${at} must be an object.`;
  if (given(e.type) && e.type !== 'events') return `${at}: only events are supported.`;
  if (given(e.id) && typeof e.id !== 'string') return `${at}.id must be an event name.`;
  return {
    id: e.id ?? null,
    type: 'events',
    ...(given(e.properties) ? { properties: e.properties } : {}),
  };
}

export function retentionFilters(source: Record<string, unknown>): QueryMapping {
  const f = part(source, 'retentionFilter');
  if (f.cumulative === true) return refuse('retentionFilter.cumulative is not supported.');
  if (
    given(f.retentionType) &&
    !['retention_recurring', 'retention_first_time'].includes(String(f.retentionType))
  )
    return refuse('retentionFilter.retentionType: retention_recurring or retention_first_time.');
  if (given(source.breakdownFilter) && Object.keys(oneBreakdown(source)).length > 0)
    return refuse('RetentionQuery takes no breakdownFilter here.');
  const filters: Record<string, unknown> = {
    insight: 'RETENTION',
    ...rangeAndProperties(source),
    ...renamed(f, {
      period: 'period',
      totalIntervals: 'total_intervals',
      retentionType: 'retention_type',
    }),
  };
  // retention counts back from date_to over total_intervals: a date_from has no meaning
  delete filters.date_from;
  for (const [name, legacy] of [
    ['targetEntity', 'target_entity'],
    ['returningEntity', 'returning_entity'],
  ] as const) {
    if (!given(f[name])) continue;
    const entity = retentionEntity(f[name], `retentionFilter.${name}`);
    if (typeof entity === 'string') return refuse(entity);
    filters[legacy] = entity;
  }
  return { ok: true, filters };
}

const PATH_TYPES = ['$pageview', '$screen', 'custom_event'];

export function pathsFilters(source: Record<string, unknown>): QueryMapping {
  const f = part(source, 'pathsFilter');
  const types = f.includeEventTypes ?? ['$pageview'];
  if (!Array.isArray(types) || types.length !== 1 || !PATH_TYPES.includes(String(types[0])))
    return refuse('pathsFilter.includeEventTypes: one of $pageview, $screen, custom_event.');
  for (const name of ['excludeEvents', 'pathGroupings', 'localPathCleaningFilters'])
    if (nonEmpty(f[name])) return refuse(`pathsFilter.${name} is not supported.`);
  if (f.pathReplacements === true) return refuse('pathsFilter.pathReplacements is not supported.');
  if (given(f.minEdgeWeight) || given(f.maxEdgeWeight))
    return refuse('pathsFilter.minEdgeWeight and maxEdgeWeight are not supported.');
  if (given(source.breakdownFilter) && Object.keys(oneBreakdown(source)).length > 0)
    return refuse('PathsQuery takes no breakdownFilter.');
  return {
    ok: true,
    filters: {
      insight: 'PATHS',
      include_event_types: types,
      ...rangeAndProperties(source),
      ...renamed(f, {
        startPoint: 'start_point',
        endPoint: 'end_point',
        stepLimit: 'step_limit',
        edgeLimit: 'edge_limit',
      }),
    },
  };
}
