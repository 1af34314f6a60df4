import { useQuery } from '@tanstack/react-query';
import { api, type Schemas, unwrap } from '../../api/client.ts';
import { useProjectId } from '../../auth.ts';
import { Empty, Failure, Loading } from '../../states.tsx';
import { ActorsList } from './actorsList.tsx';
import { COMMON_FIELDS, type Field, InsightForm } from './insightForm.tsx';
import { commonOf, propertiesOf, useInsightUrl } from './insightUrl.ts';

const PERIODS = ['Hour', 'Day', 'Week', 'Month'] as const;
type Period = (typeof PERIODS)[number];

// Retention has no `date_from`: its range is `total_intervals` periods ending at `date_to`.
const FIELDS: Field[] = [
  { name: 'target', label: 'Cohort event', hint: '$pageview' },
  { name: 'returning', label: 'Returning event', hint: 'empty: the cohort event' },
  { name: 'period', label: 'Period', options: PERIODS.map((p) => [p, p] as const) },
  { name: 'intervals', label: 'Cohorts shown (1–100)', hint: '11' },
  ...COMMON_FIELDS.filter((f) => f.name !== 'date_from'),
];
const NAMES = [
  'target',
  'returning',
  'period',
  'intervals',
  'date_to',
  'property',
  'property_type',
];

type Cohort = Schemas['Retention']['result'][number];
/** A cohort's start as a UTC date (the API's intervals are UTC), with the hour when it is not midnight. */
const dateOf = (iso: string) => {
  const d = new Date(iso);
  const hour = d.getUTCHours() || d.getUTCMinutes();
  return d.toLocaleString(undefined, {
    timeZone: 'UTC',
    dateStyle: 'medium',
    ...(hour ? { timeStyle: 'short' } : {}),
  });
};
const entity = (id: string) => JSON.stringify({ id, type: 'events' });

/** `/insights/retention`: the cohort table; a cell lists the persons of that cohort who came back then. */
export function RetentionPage() {
  const projectId = useProjectId()!;
  const { search, get, go } = useInsightUrl('/insights/retention');
  const values = {
    target: get('target', '$pageview'),
    returning: get('returning'),
    period: get('period', 'Day'),
    intervals: get('intervals', '11'),
    ...commonOf(get),
  };
  const properties = propertiesOf(values);
  const intervals = Number(values.intervals);
  const query = {
    target_entity: entity(values.target.trim() || '$pageview'),
    ...(values.returning.trim() ? { returning_entity: entity(values.returning.trim()) } : {}),
    period: (PERIODS.includes(values.period as Period) ? values.period : 'Day') as Period,
    // not a whole number: sent as it is (0), for the API's 400 to say why
    total_intervals: Number.isNaN(intervals) ? 0 : intervals,
    ...(values.date_to ? { date_to: values.date_to } : {}),
    ...(properties ? { properties } : {}),
  };
  const retention = useQuery({
    queryKey: ['insights', 'retention', projectId, query],
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/insights/retention/', {
          params: { path: { project_id: String(projectId) }, query },
        }),
      ).result,
  });
  const [cohort, back] = get('cell').split(':').map(Number);
  const row = retention.data?.[cohort ?? -1];
  const cell = back !== undefined && Number.isInteger(back) ? row?.values[back] : undefined;

  return (
    <>
      <InsightForm
        key={search}
        label="Retention"
        fields={FIELDS}
        values={values}
        onApply={(draft) =>
          go({ ...Object.fromEntries(NAMES.map((n) => [n, draft[n]])), cell: undefined })
        }
      />
      {retention.isPending ? (
        <Loading what="the retention table" />
      ) : retention.isError ? (
        <Failure error={retention.error} />
      ) : retention.data.every((c) => (c.values[0]?.count ?? 0) === 0) ? (
        <Empty>Nobody did the cohort event in this range.</Empty>
      ) : (
        <CohortTable cohorts={retention.data} onPick={(c, j) => go({ cell: `${c}:${j}` })} />
      )}
      {row && cell ? (
        <ActorsList
          title={`cohort ${row.label} (${dateOf(row.date)}), ${
            back === 0 ? 'all of it' : `back after ${back} ${values.period.toLowerCase()}(s)`
          }`}
          queryKey={['retention', query, cohort, back]}
          load={async (project_id) =>
            unwrap(
              await api.GET('/api/projects/{project_id}/persons/retention/', {
                params: {
                  path: { project_id },
                  query: { ...query, selected_interval: cohort, returning_interval: back },
                },
              }),
            ) as Schemas['Actors']
          }
        />
      ) : null}
    </>
  );
}

function CohortTable({
  cohorts,
  onPick,
}: {
  cohorts: Cohort[];
  onPick: (cohort: number, back: number) => void;
}) {
  const width = cohorts[0]?.values.length ?? 0;
  return (
    <table class="insight-table retention">
      <caption>Cohorts: persons who came back, by periods since</caption>
      <thead>
        <tr>
          <th scope="col">Cohort</th>
          {Array.from({ length: width }, (_, j) => (
            <th scope="col" key={j}>
              {j === 0 ? 'Size' : `+${j}`}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {cohorts.map((c, i) => {
          const size = c.values[0]?.count ?? 0;
          return (
            <tr key={c.date}>
              <th scope="row">
                {c.label} <time dateTime={c.date}>({dateOf(c.date)})</time>
              </th>
              {c.values.map((v, j) => (
                <td key={j}>
                  <button
                    type="button"
                    class="link"
                    aria-label={`${v.count}: persons of cohort ${c.label} (${dateOf(c.date)}) back after ${j}`}
                    onClick={() => onPick(i, j)}
                  >
                    {v.count}
                    {j > 0 && size > 0 ? ` (${Math.round((100 * v.count) / size)}%)` : ''}
                  </button>
                </td>
              ))}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
