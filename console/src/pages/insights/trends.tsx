import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../../api/client.ts';
import { useProjectId } from '../../auth.ts';
import { Empty, Failure, Loading } from '../../states.tsx';
import { ActorsList } from './actorsList.tsx';
import { COMMON_FIELDS, type Field, InsightForm } from './insightForm.tsx';
import { COMMON_NAMES, commonOf, rangeQueryOf, useInsightUrl } from './insightUrl.ts';
import { colourOf, TrendChart } from './trendChart.tsx';

/** Breakdown series one chart draws (the rest summed as "Other"): more are unreadable as lines. */
const BREAKDOWN_LIMIT = 10;

const FIELDS: Field[] = [
  { name: 'event', label: 'Event', hint: '$pageview; empty: all events' },
  {
    name: 'math',
    label: 'Count',
    options: [
      ['total', 'events'],
      ['dau', 'unique persons'],
    ],
  },
  {
    name: 'interval',
    label: 'Interval',
    options: [
      ['hour', 'hour'],
      ['day', 'day'],
      ['week', 'week'],
      ['month', 'month'],
    ],
  },
  {
    name: 'display',
    label: 'Chart',
    options: [
      ['line', 'line'],
      ['bar', 'bar'],
    ],
  },
  { name: 'breakdown', label: 'Breakdown by', hint: 'a property, e.g. plan' },
  {
    name: 'breakdown_type',
    label: 'Breakdown property of',
    options: [
      ['event', 'the event'],
      ['person', 'the person'],
    ],
  },
  ...COMMON_FIELDS,
];
const NAMES = ['event', 'math', 'interval', 'display', 'breakdown', 'breakdown_type'] as const;

type Series = Schemas['InsightSeries']['result'][number];

/** `/insights/trends`: events per interval as a line or bar chart; a point (click, or its button) lists its persons. */
export function TrendsPage() {
  const projectId = useProjectId()!;
  const { search, get, go } = useInsightUrl('/insights/trends');
  const values = {
    event: get('event', '$pageview'),
    math: get('math', 'total'),
    interval: get('interval', 'day'),
    display: get('display', 'line'),
    breakdown: get('breakdown'),
    breakdown_type: get('breakdown_type', 'event'),
    ...commonOf(get),
  };
  const events = JSON.stringify([
    { id: values.event.trim() || null, type: 'events', order: 0, math: values.math },
  ]);
  const interval = values.interval as 'hour' | 'day' | 'week' | 'month';
  const breakdown_type: 'event' | 'person' =
    values.breakdown_type === 'person' ? 'person' : 'event';
  const query = {
    events,
    interval,
    ...rangeQueryOf(values),
    ...(values.breakdown
      ? { breakdown: values.breakdown, breakdown_type, breakdown_limit: BREAKDOWN_LIMIT }
      : {}),
  } as const;
  const trend = useQuery({
    queryKey: ['insights', 'trend', projectId, query],
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/insights/trend/', {
          params: { path: { project_id: String(projectId) }, query },
        }),
      ).result,
  });
  const [s, i] = get('point').split(':').map(Number);
  const picked = trend.data?.[s ?? -1];
  const pointIndex = i ?? -1;
  const pick = (series: number, point: number) => go({ point: `${series}:${point}` });

  return (
    <>
      <InsightForm
        key={search}
        label="Trend"
        fields={FIELDS}
        values={values}
        onApply={(draft) =>
          go({
            ...Object.fromEntries([...NAMES, ...COMMON_NAMES].map((n) => [n, draft[n]])),
            point: undefined,
          })
        }
      />
      {trend.isPending ? (
        <Loading what="the trend" />
      ) : trend.isError ? (
        <Failure error={trend.error} />
      ) : trend.data.every((r) => r.count === 0) ? (
        <Empty>No events match in this range. Try a longer range or another event.</Empty>
      ) : (
        <TrendView result={trend.data} display={values.display} onPick={pick} />
      )}
      {picked && picked.days[pointIndex] !== undefined ? (
        <ActorsList
          title={`${picked.label}, ${picked.labels[pointIndex]} (${picked.data[pointIndex]})`}
          queryKey={['trends', query, s, pointIndex]}
          load={async (project_id) =>
            unwrap(
              await api.GET('/api/projects/{project_id}/persons/trends/', {
                params: {
                  path: { project_id },
                  query: {
                    ...query,
                    date_from: String(picked.days[pointIndex]),
                    date_to: undefined,
                    ...(picked.breakdown_value !== undefined
                      ? { breakdown_value: picked.breakdown_value }
                      : {}),
                  },
                },
              }),
            ) as Schemas['Actors']
          }
        />
      ) : null}
    </>
  );
}

function TrendView({
  result,
  display,
  onPick,
}: {
  result: Series[];
  display: string;
  onPick: (series: number, point: number) => void;
}) {
  const labels = result[0]?.labels ?? [];
  const series = useMemo(() => result.map((r) => ({ label: r.label, data: r.data })), [result]);
  return (
    <>
      <figure class="insight-figure">
        <figcaption>
          {result.map((r) => r.label).join(', ')} per interval; click a point to list its persons.
        </figcaption>
        <TrendChart
          labels={labels}
          series={series}
          display={display === 'bar' ? 'bar' : 'line'}
          onPick={onPick}
        />
      </figure>
      <table class="insight-table">
        <caption>Points (each lists its persons)</caption>
        <thead>
          <tr>
            <th scope="col">Interval</th>
            {result.map((r, s) => (
              <th scope="col" key={r.label} style={{ color: colourOf(s) }}>
                {r.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {labels.map((label, i) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              {result.map((r, s) => (
                <td key={r.label}>
                  <button
                    type="button"
                    class="link"
                    aria-label={`${r.data[i]}: persons of ${r.label}, ${label}`}
                    onClick={() => onPick(s, i)}
                  >
                    {r.data[i]}
                  </button>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
