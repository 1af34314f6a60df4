import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { Empty, Failure, Loading } from '../../states.tsx';
import { diffLines } from './changeDiff.ts';
import { type ActivityEntry, HISTORY_LIMIT, useFlagHistory } from './flagApi.ts';

const who = (e: ActivityEntry) =>
  e.user ? [e.user.first_name, e.user.last_name].join(' ').trim() || e.user.email : 'System';

function Entry({ entry, flagId }: { entry: ActivityEntry; flagId: number }) {
  const lines = entry.detail.changes.flatMap((c) => diffLines(c.field, c.before, c.after));
  return (
    <li class="history-entry">
      <p>
        <strong>{entry.activity.replaceAll('_', ' ')}</strong> by {who(entry)} ·{' '}
        <time dateTime={entry.created_at}>{new Date(entry.created_at).toLocaleString()}</time> ·{' '}
        <Link href={`/feature_flags/${flagId}?as_of=${encodeURIComponent(entry.created_at)}`}>
          The flag after this change
        </Link>
      </p>
      {lines.length > 0 && (
        <table class="diff">
          <caption class="visually-hidden">What changed</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {lines.map((l) => (
              <tr key={l.path}>
                <th scope="row">
                  <code>{l.path}</code>
                </th>
                <td>
                  <del>
                    <code>{l.before}</code>
                  </del>
                </td>
                <td>
                  <ins>
                    <code>{l.after}</code>
                  </ins>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </li>
  );
}

/** The flag's history from its event stream (the activity endpoint), newest first, 50 entries a page. */
export function FlagHistory({ flagId }: { flagId: number }) {
  const [offset, setOffset] = useState(0);
  const history = useFlagHistory(flagId, offset);
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      {history.isPending ? (
        <Loading what="the history" />
      ) : history.isError ? (
        <Failure error={history.error} />
      ) : history.data.results.length === 0 ? (
        <Empty>No changes recorded.</Empty>
      ) : (
        <>
          <ol class="history" aria-label="Changes, newest first">
            {history.data.results.map((e) => (
              <Entry key={e.id} entry={e} flagId={flagId} />
            ))}
          </ol>
          {(offset > 0 || history.data.next !== null) && (
            <div class="actions">
              <button
                type="button"
                disabled={offset === 0}
                onClick={() => setOffset(Math.max(0, offset - HISTORY_LIMIT))}
              >
                Newer changes
              </button>
              <button
                type="button"
                disabled={history.data.next === null}
                onClick={() => setOffset(offset + HISTORY_LIMIT)}
              >
                Older changes
              </button>
            </div>
          )}
        </>
      )}
    </section>
  );
}
