import { Link, useLocation, useSearch } from 'wouter-preact';
import { Empty, Failure, Loading } from '../../states.tsx';
import { LIST_LIMIT, useCanWriteFlags, useFlagList } from './flagApi.ts';
import { rolloutSummary } from './flagDraft.ts';

/** `/feature_flags?offset=n`: the project's flags, a page of 100 at a time, with status and rollout. */
export function FlagsList() {
  const [, navigate] = useLocation();
  const offset = Math.max(0, Number(new URLSearchParams(useSearch()).get('offset')) || 0);
  const flags = useFlagList(offset);
  const canWrite = useCanWriteFlags();
  return (
    <section aria-labelledby="page-title">
      <div class="title-row">
        <h1 id="page-title">Feature flags</h1>
        {canWrite && <Link href="/feature_flags/new">New flag</Link>}
      </div>
      {flags.isPending ? (
        <Loading what="feature flags" />
      ) : flags.isError ? (
        <Failure error={flags.error} />
      ) : flags.data.results.length === 0 ? (
        <Empty>No feature flags yet.{canWrite ? ' Create one with “New flag”.' : ''}</Empty>
      ) : (
        <>
          <table>
            <caption class="visually-hidden">Feature flags</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Rollout</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {flags.data.results.map((f) => (
                <tr key={f.id}>
                  <td>
                    <Link href={`/feature_flags/${f.id}`}>{f.key}</Link>
                  </td>
                  <td>{f.name}</td>
                  <td>{f.active ? 'Enabled' : 'Disabled'}</td>
                  <td>{rolloutSummary(f)}</td>
                  <td>
                    <time dateTime={f.updated_at}>{new Date(f.updated_at).toLocaleString()}</time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {(offset > 0 || flags.data.next !== null) && (
            <nav class="actions pager" aria-label="Pages of flags">
              <button
                type="button"
                disabled={offset === 0}
                onClick={() =>
                  navigate(`/feature_flags?offset=${Math.max(0, offset - LIST_LIMIT)}`)
                }
              >
                Previous
              </button>
              <span>
                {offset + 1}–{offset + flags.data.results.length} of {flags.data.count}
              </span>
              <button
                type="button"
                disabled={flags.data.next === null}
                onClick={() => navigate(`/feature_flags?offset=${offset + LIST_LIMIT}`)}
              >
                Next
              </button>
            </nav>
          )}
        </>
      )}
    </section>
  );
}
