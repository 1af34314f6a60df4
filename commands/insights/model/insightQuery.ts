/**
 * A saved insight's `query` (PostHog's query schema) → the legacy `filters` the insight engine
 * computes. Only what maps exactly is taken: `InsightVizNode` (or its bare source) over a
 * `TrendsQuery`, `StickinessQuery` or `LifecycleQuery` whose series are `EventsNode`s with math
 * total or dau, or a `FunnelsQuery`, `RetentionQuery` or `PathsQuery`
 * (funnelsRetentionPathsQueries.ts). Anything else is refused with the reason, so nothing is saved
 * that would be computed differently from what the client asked for.
 */
import { funnelsFilters, pathsFilters, retentionFilters } from './funnelsRetentionPathsQueries.ts';
import {
  entityLists,
  eventsEntity,
  isObject,
  type MappingOptions,
  oneBreakdown,
  type QueryMapping,
  rangeAndProperties,
  refuse,
} from './insightQueryParts.ts';

export type { MappingOptions, QueryMapping } from './insightQueryParts.ts';

const KINDS = { TrendsQuery: 'TRENDS', StickinessQuery: 'STICKINESS', LifecycleQuery: 'LIFECYCLE' };
const OTHER_KINDS = {
  FunnelsQuery: funnelsFilters,
  RetentionQuery: retentionFilters,
  PathsQuery: pathsFilters,
};
const MATHS = new Set(['total', 'dau']);

export function filtersOfQuery(
  query: Record<string, unknown>,
  options: MappingOptions = {},
): QueryMapping {
  const source = query.kind === 'InsightVizNode' ? query.source : query;
  if (!isObject(source)) return refuse('query.source must be an object (a TrendsQuery).');
  const kind = String(source.kind);
  const other = OTHER_KINDS[kind as keyof typeof OTHER_KINDS];
  if (other) return other(source, options);
  const insight = KINDS[kind as keyof typeof KINDS];
  if (insight === undefined)
    return refuse(
      `query kind ${kind} is not supported: saved insights take TrendsQuery, StickinessQuery, LifecycleQuery, FunnelsQuery, RetentionQuery or PathsQuery (in an InsightVizNode), or legacy filters.`,
    );
  if (!Array.isArray(source.series) || source.series.length === 0 || source.series.length > 20)
    return refuse('query.source.series must list 1 to 20 EventsNode series.');
  const entities: Record<string, unknown>[] = [];
  for (const [i, node] of source.series.entries()) {
    const entity = eventsEntity(node, `query.source.series[${i}]`, MATHS, options);
    if (typeof entity === 'string') return refuse(entity);
    entities.push(entity);
  }
  const filters: Record<string, unknown> = {
    insight,
    ...entityLists(entities),
    ...rangeAndProperties(source),
  };
  if (source.interval !== undefined) filters.interval = source.interval;
  const breakdown = oneBreakdown(source);
  if (typeof breakdown === 'string') return refuse(breakdown);
  if (Object.keys(breakdown).length > 0 && kind !== 'TrendsQuery')
    return refuse(`${kind} takes no breakdownFilter.`);
  Object.assign(filters, breakdown);
  const display = isObject(source.trendsFilter) ? source.trendsFilter.display : undefined;
  if (typeof display === 'string') filters.display = display;
  return { ok: true, filters };
}
