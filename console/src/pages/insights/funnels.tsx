import { useQuery } from '@tanstack/react-query';
import { api, type Schemas, unwrap } from '../../api/client.ts';
import { useProjectId } from '../../auth.ts';
import { Empty, Failure, Loading } from '../../states.tsx';
import { ActorsList } from './actorsList.tsx';
import { COMMON_FIELDS, type Field, InsightForm } from './insightForm.tsx';
import { COMMON_NAMES, commonOf, rangeQueryOf, useInsightUrl } from './insightUrl.ts';

const FIELDS: Field[] = [
  { name: 'steps', label: 'Steps (event names, comma-separated)', hint: '$pageview, signed_up' },
  {
    name: 'order',
    label: 'Step order',
    options: [
      ['ordered', 'in order'],
      ['strict', 'strictly in order'],
      ['unordered', 'any order'],
    ],
  },
  { name: 'window', label: 'Conversion window (days)', hint: '14' },
  ...COMMON_FIELDS,
];
const NAMES = ['steps', 'order', 'window'] as const;

/** One step (without a breakdown the result is a flat list of these). */
type Step = Exclude<Schemas['Funnel']['result'][number], unknown[]>;
const percent = (part: number, whole: number) =>
  whole === 0 ? '–' : `${((100 * part) / whole).toFixed(1)}%`;

/** `/insights/funnels`: persons through each step, conversion and drop-off; a step lists its persons. */
export function FunnelsPage() {
  const projectId = useProjectId()!;
  const { search, get, go } = useInsightUrl('/insights/funnels');
  const values = {
    steps: get('steps'),
    order: get('order', 'ordered'),
    window: get('window', '14'),
    ...commonOf(get),
  };
  const names = values.steps
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const windowDays = Number(values.window);
  const query = {
    events: JSON.stringify(names.map((id, order) => ({ id, type: 'events', order }))),
    funnel_order_type: values.order as 'ordered' | 'strict' | 'unordered',
    // not a whole number ≥ 1: sent as it is, for the API's 400 to say why
    ...(values.window ? { funnel_window_days: Number.isNaN(windowDays) ? 0 : windowDays } : {}),
    ...rangeQueryOf(values),
  };
  const funnel = useQuery({
    queryKey: ['insights', 'funnel', projectId, query],
    enabled: names.length >= 2,
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/insights/funnel/', {
          params: { path: { project_id: String(projectId) }, query },
        }),
      ).result as Step[],
  });
  const chosen = Number(get('persons'));
  const step = Number.isInteger(chosen) && chosen !== 0 ? chosen : undefined;
  const stepName = step !== undefined ? names[Math.abs(step) - 1] : undefined;

  return (
    <>
      <InsightForm
        key={search}
        label="Funnel"
        fields={FIELDS}
        values={values}
        onApply={(draft) =>
          go({
            ...Object.fromEntries([...NAMES, ...COMMON_NAMES].map((n) => [n, draft[n]])),
            persons: undefined,
          })
        }
      />
      {names.length < 2 ? (
        <Empty>Name at least two steps, e.g. $pageview, signed_up.</Empty>
      ) : funnel.isPending ? (
        <Loading what="the funnel" />
      ) : funnel.isError ? (
        <Failure error={funnel.error} />
      ) : (funnel.data[0]?.count ?? 0) === 0 ? (
        <Empty>Nobody did the first step in this range.</Empty>
      ) : (
        <FunnelSteps steps={funnel.data} onPick={(n) => go({ persons: String(n) })} />
      )}
      {step !== undefined && stepName !== undefined && funnel.data ? (
        <ActorsList
          title={step > 0 ? `reached ${stepName}` : `dropped off before ${stepName}`}
          queryKey={['funnel', query, step]}
          load={async (project_id) =>
            unwrap(
              await api.GET('/api/projects/{project_id}/persons/funnel/', {
                params: { path: { project_id }, query: { ...query, funnel_step: step } },
              }),
            )
          }
        />
      ) : null}
    </>
  );
}

function FunnelSteps({ steps, onPick }: { steps: Step[]; onPick: (step: number) => void }) {
  const first = steps[0]?.count ?? 0;
  return (
    <table class="insight-table funnel">
      <caption>Funnel steps: conversion from the first step, drop-off from the step before</caption>
      <thead>
        <tr>
          <th scope="col">Step</th>
          <th scope="col">Persons</th>
          <th scope="col">Conversion</th>
          <th scope="col">Dropped off</th>
        </tr>
      </thead>
      <tbody>
        {steps.map((s, i) => {
          const before = i === 0 ? s.count : (steps[i - 1]?.count ?? 0);
          const dropped = before - s.count;
          return (
            <tr key={s.order}>
              <th scope="row">
                {i + 1}. {s.name}
                <div class="bar" aria-hidden="true">
                  <span style={{ width: percent(s.count, first) }} />
                </div>
              </th>
              <td>
                <button
                  type="button"
                  class="link"
                  aria-label={`${s.count}: persons who reached ${s.name}`}
                  onClick={() => onPick(i + 1)}
                >
                  {s.count}
                </button>
              </td>
              <td>{percent(s.count, first)}</td>
              <td>
                {i === 0 ? (
                  '–'
                ) : (
                  <button
                    type="button"
                    class="link"
                    aria-label={`${dropped}: persons who dropped off before ${s.name}`}
                    onClick={() => onPick(-(i + 1))}
                  >
                    {dropped} ({percent(dropped, before)})
                  </button>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
