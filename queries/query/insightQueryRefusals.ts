/**
 * What an insight query on `/query` may carry that the insight engine does not compute, refused
 * with the field that asked for it (a 400): answering without it would show other numbers than
 * PostHog's for the same question. Fields that only style the chart (colours, legends, toggled
 * lifecycles) are let through. Also the one normalisation PostHog's newer clients need: a
 * `breakdownFilter.breakdowns` list of one breakdown is that breakdown.
 */
import { isObject } from '../../commands/insights/model/insightQueryParts.ts';

const given = (v: unknown) => v !== undefined && v !== null;
const nonEmpty = (v: unknown) => Array.isArray(v) && v.length > 0;
const part = (source: Record<string, unknown>, key: string): Record<string, unknown> =>
  isObject(source[key]) ? source[key] : {};

/** Trends displays drawn from the per-interval series as computed (the others aggregate). */
const SERIES_DISPLAYS = new Set([
  'ActionsLineGraph',
  'ActionsBar',
  'ActionsAreaGraph',
  'ActionsStackedBar',
]);
const BREAKDOWN_TYPES = new Set(['event', 'person']);

/** Why this insight query's source cannot be computed here, or undefined when it can. */
export function refusedField(source: Record<string, unknown>): string | undefined {
  const at = 'query.source';
  if (part(source, 'compareFilter').compare === true)
    return `${at}.compareFilter.compare: comparing to the previous period is not computed here.`;
  if (given(source.samplingFactor) && source.samplingFactor !== 1)
    return `${at}.samplingFactor: sampling is not computed here (every event is counted).`;
  if (given(source.aggregation_group_type_index))
    return `${at}.aggregation_group_type_index: aggregating by groups is not computed here.`;
  if (part(source, 'dateRange').explicitDate === true)
    return `${at}.dateRange.explicitDate: ranges start at the interval's start here.`;
  const series = Array.isArray(source.series) ? source.series : [];
  for (const [i, node] of series.entries())
    if (isObject(node) && given(node.math_group_type_index))
      return `${at}.series[${i}].math_group_type_index: group maths are not computed here.`;
  const trends = part(source, 'trendsFilter');
  for (const name of ['formula', 'formulas', 'formulaNodes'])
    if (
      given(trends[name]) &&
      trends[name] !== '' &&
      (!Array.isArray(trends[name]) || nonEmpty(trends[name]))
    )
      return `${at}.trendsFilter.${name}: formulas are not computed here.`;
  if (
    source.kind === 'TrendsQuery' &&
    given(trends.display) &&
    !SERIES_DISPLAYS.has(String(trends.display))
  )
    return `${at}.trendsFilter.display: ${String(trends.display)} is not computed here; one of ${[...SERIES_DISPLAYS].join(', ')}.`;
  if (part(source, 'stickinessFilter').computedAs === 'cumulative')
    return `${at}.stickinessFilter.computedAs: cumulative stickiness is not computed here.`;
  const breakdown = part(source, 'breakdownFilter');
  if (given(breakdown.breakdown_type) && !BREAKDOWN_TYPES.has(String(breakdown.breakdown_type)))
    return `${at}.breakdownFilter.breakdown_type: only event and person breakdowns are computed.`;
  if (breakdown.breakdown_normalize_url === true)
    return `${at}.breakdownFilter.breakdown_normalize_url is not computed here.`;
  if (given(breakdown.breakdown_histogram_bin_count))
    return `${at}.breakdownFilter.breakdown_histogram_bin_count: histograms are not computed here.`;
  return undefined;
}

/** The source with a one-item `breakdownFilter.breakdowns` as the single breakdown it means. */
export function withSingleBreakdown(source: Record<string, unknown>): Record<string, unknown> {
  const filter = part(source, 'breakdownFilter');
  const list = filter.breakdowns;
  if (!Array.isArray(list) || list.length !== 1 || given(filter.breakdown)) return source;
  const only = list[0];
  if (!isObject(only)) return source;
  const { breakdowns: _one, ...rest } = filter;
  return {
    ...source,
    breakdownFilter: {
      ...rest,
      breakdown: only.property,
      ...(given(only.type) ? { breakdown_type: only.type } : {}),
    },
  };
}
