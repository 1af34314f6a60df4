import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Schemas, unwrap } from '../../api/client.ts';
import { LocalTime } from '../../localTime.tsx';
import { Empty, Failure, Loading } from '../../states.tsx';

type Rebuild = Schemas['Rebuild'];

/** While a rebuild is queued or running its progress is asked for this often; otherwise every 10 s. */
const WATCH_MS = 500;
const IDLE_MS = 10_000;
/** the newest rebuilds shown (the API answers up to 100) */
const SHOWN = 5;

const inProgress = (r: Rebuild) => r.status === 'queued' || r.status === 'running';

/** How far a rebuild is: its position against the head it rebuilds up to. */
function Progress({ rebuild }: { rebuild: Rebuild }) {
  if (rebuild.status === 'queued') return <span>Waiting for the server to take it…</span>;
  const head = Number(rebuild.head ?? 0);
  const position = Number(rebuild.position ?? 0);
  const done = rebuild.status === 'finished' ? 1 : head > 0 ? Math.min(position / head, 1) : 0;
  const label = `Rebuild ${rebuild.id} progress`;
  return (
    <span class="rebuild-progress">
      <progress aria-label={label} max={1} value={done} /> {rebuild.read_model ?? rebuild.target}:{' '}
      {rebuild.position ?? '0'} of {rebuild.head ?? '?'} ({Math.round(done * 100)}%)
    </span>
  );
}

const statusText: Record<Rebuild['status'], string> = {
  queued: 'Queued',
  running: 'Running',
  finished: 'Finished',
  failed: 'Failed',
};

/**
 * Rebuilds of the ClickHouse read models from the log, beside the live ones (they keep serving): start one, watch its
 * progress until it ends. The API allows one at a time and says so if another is under way.
 */
export function Rebuilds() {
  const client = useQueryClient();
  const rebuilds = useQuery({
    queryKey: ['rebuilds'],
    refetchInterval: (q) => (q.state.data?.some(inProgress) ? WATCH_MS : IDLE_MS),
    queryFn: async () =>
      unwrap(await api.GET('/api/projections/rebuilds/', { params: { query: { limit: SHOWN } } }))
        .results,
  });
  const start = useMutation({
    mutationFn: async () =>
      unwrap(await api.POST('/api/projections/rebuilds/', { body: { target: 'events' } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['rebuilds'] }),
  });
  const running = rebuilds.data?.some(inProgress) ?? false;
  return (
    <section aria-labelledby="rebuilds-title">
      <div class="title-row">
        <h2 id="rebuilds-title">Rebuilds</h2>
        <button
          type="submit"
          disabled={running || start.isPending}
          onClick={() => start.mutate()}
          aria-describedby="rebuild-help"
        >
          Rebuild events read models
        </button>
      </div>
      <p id="rebuild-help" class="help">
        Rebuilds the ClickHouse read models from the log beside the live ones, which keep serving
        until the rebuilt ones replace them. One rebuild at a time.
      </p>
      {start.isError && <Failure error={start.error} />}
      {rebuilds.isPending ? (
        <Loading what="rebuilds" />
      ) : rebuilds.isError ? (
        <Failure error={rebuilds.error} />
      ) : rebuilds.data.length === 0 ? (
        <Empty>No rebuild has been started on this server.</Empty>
      ) : (
        <table>
          <caption class="visually-hidden">Rebuilds, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Rebuild</th>
              <th scope="col">Status</th>
              <th scope="col">Progress</th>
              <th scope="col">Requested</th>
              <th scope="col">Finished</th>
            </tr>
          </thead>
          <tbody aria-live="polite">
            {rebuilds.data.map((r) => (
              <tr key={r.id}>
                <th scope="row">#{r.id}</th>
                <td>{statusText[r.status]}</td>
                <td>
                  {r.status === 'failed' ? (
                    <span class="ops-warning">{r.error}</span>
                  ) : (
                    <Progress rebuild={r} />
                  )}
                </td>
                <td>
                  <LocalTime iso={r.requested_at} />
                </td>
                <td>{r.finished_at ? <LocalTime iso={r.finished_at} /> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
