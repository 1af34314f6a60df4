import { useQuery } from '@tanstack/react-query';
import { useLocation, useSearch } from 'wouter-preact';
import { api, type Schemas, unwrap } from '../../api/client.ts';
import { allows, useCurrentKey, useProjectId, useSessionKey } from '../../auth.ts';
import { LocalTime } from '../../localTime.tsx';
import { Empty, Failure, Loading } from '../../states.tsx';
import { Rebuilds } from './rebuilds.tsx';
import './operations.css';

/** The read models' positions move as events arrive: asked again every 2 s. */
const STATUS_MS = 2000;

function ReadModels({ status }: { status: Schemas['ProjectionsStatus'] }) {
  return (
    <table>
      <caption class="visually-hidden">Read models against the log's head</caption>
      <thead>
        <tr>
          <th scope="col">Read model</th>
          <th scope="col">Position</th>
          <th scope="col">Pending events</th>
          <th scope="col">Lag</th>
          <th scope="col">Parked events</th>
        </tr>
      </thead>
      <tbody>
        {status.read_models.map((m) => (
          <tr key={m.name}>
            <th scope="row">{m.name}</th>
            <td>{m.position}</td>
            <td>{m.pending_events}</td>
            <td>{m.lag_seconds === 0 ? 'caught up' : `${m.lag_seconds.toFixed(1)} s`}</td>
            <td class={m.parked_events > 0 ? 'field-error' : undefined}>{m.parked_events}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Parked({ parked }: { parked: Schemas['ProjectionsStatus']['parked'] }) {
  if (parked.length === 0)
    return <Empty>No parked events: every read model applied every event.</Empty>;
  return (
    <table>
      <caption class="visually-hidden">Parked events, oldest first</caption>
      <thead>
        <tr>
          <th scope="col">Read model</th>
          <th scope="col">Position</th>
          <th scope="col">Event</th>
          <th scope="col">Why</th>
          <th scope="col">Attempts</th>
          <th scope="col">Parked at</th>
        </tr>
      </thead>
      <tbody>
        {parked.map((p) => (
          <tr key={`${p.read_model}-${p.position}`}>
            <td>{p.read_model}</td>
            <td>{p.position}</td>
            <td>
              <code>{p.event_type}</code> in <code>{p.stream}</code>
            </td>
            <td>{p.error}</td>
            <td>{p.attempts}</td>
            <td>
              <LocalTime iso={p.parked_at} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const DAYS = [1, 7, 30, 90] as const;

/** The project's ingestion warnings of the last `days` days (in the URL: `?days=7`), grouped by type. */
function IngestionWarnings() {
  const projectId = useProjectId()!;
  const [, navigate] = useLocation();
  const asked = Number(new URLSearchParams(useSearch()).get('days'));
  const days = DAYS.find((d) => d === asked) ?? 30;
  const warnings = useQuery({
    queryKey: ['ingestion_warnings', projectId, days],
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/ingestion_warnings/', {
          params: { path: { project_id: String(projectId) }, query: { days } },
        }),
      ).results,
  });
  return (
    <section aria-labelledby="warnings-title">
      <div class="title-row">
        <h2 id="warnings-title">Ingestion warnings</h2>
        <div>
          <label for="warning-days">Period</label>
          <select
            id="warning-days"
            value={days}
            onChange={(e) => navigate(`/operations?days=${e.currentTarget.value}`)}
          >
            {DAYS.map((d) => (
              <option key={d} value={d}>
                last {d} {d === 1 ? 'day' : 'days'}
              </option>
            ))}
          </select>
        </div>
      </div>
      {warnings.isPending ? (
        <Loading what="ingestion warnings" />
      ) : warnings.isError ? (
        <Failure error={warnings.error} />
      ) : warnings.data.length === 0 ? (
        <Empty>No ingestion warnings in this project for the last {days} days.</Empty>
      ) : (
        warnings.data.map((g) => (
          <details key={g.type}>
            <summary>
              <code>{g.type}</code>: {g.count} (last <LocalTime iso={g.lastSeen} />)
            </summary>
            <ul>
              {g.warnings.map((w) => (
                <li key={`${w.timestamp}-${JSON.stringify(w.details)}`}>
                  <LocalTime iso={w.timestamp} /> <code>{JSON.stringify(w.details)}</code>
                </li>
              ))}
            </ul>
          </details>
        ))
      )}
    </section>
  );
}

/**
 * `/operations`: each read model's position, lag and parked events (server-wide, a `*` key's), rebuilds and their
 * progress, and the chosen project's ingestion warnings.
 */
export function OperationsPage() {
  const scopes = useCurrentKey(useSessionKey()).data?.scopes ?? [];
  const status = useQuery({
    queryKey: ['projections'],
    refetchInterval: STATUS_MS,
    queryFn: async () => unwrap(await api.GET('/api/projections/')),
  });
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Operations</h1>
      <section aria-labelledby="models-title">
        <h2 id="models-title">Read models</h2>
        {status.isPending ? (
          <Loading what="read models" />
        ) : status.isError ? (
          <Failure error={status.error} />
        ) : (
          <>
            <p>
              Log head: <strong>{status.data.head}</strong>
            </p>
            <ReadModels status={status.data} />
            <h3>Parked events</h3>
            <Parked parked={status.data.parked} />
          </>
        )}
      </section>
      {allows(scopes, '*') && <Rebuilds />}
      {allows(scopes, 'query:read') && <IngestionWarnings />}
    </section>
  );
}
