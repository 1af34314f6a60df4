import { useQuery } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import { Link, useLocation, useSearch } from 'wouter-preact';
import { api, type Schemas, unwrap } from '../../api/client.ts';
import { useProjectId } from '../../auth.ts';
import { LocalTime } from '../../localTime.tsx';
import { Empty, Failure, Loading } from '../../states.tsx';

/** One page of the list: the API's default (100), well under its maximum (1000). */
const PAGE = 100;

/** `/persons?search=…&offset=…`: persons newest first, searched by email, distinct id or uuid (the API's `search`). */
export function PersonsPage() {
  const projectId = useProjectId()!;
  const params = new URLSearchParams(useSearch());
  const search = params.get('search') ?? '';
  const offset = Math.max(0, Number(params.get('offset')) || 0);
  const [, navigate] = useLocation();
  const [draft, setDraft] = useState(search);
  const go = (s: string, o: number) => {
    const q = new URLSearchParams();
    if (s) q.set('search', s);
    if (o) q.set('offset', String(o));
    navigate(`/persons${q.size ? `?${q}` : ''}`);
  };
  const persons = useQuery({
    queryKey: ['persons', projectId, search, offset],
    placeholderData: (previous) => previous,
    queryFn: async () =>
      // Without `format=csv` the list answers PersonsPage.
      unwrap(
        await api.GET('/api/projects/{project_id}/persons/', {
          params: {
            path: { project_id: String(projectId) },
            query: { limit: PAGE, offset, ...(search ? { search } : {}) },
          },
        }),
      ) as Schemas['PersonsPage'],
  });
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Persons</h1>
      <form
        class="filters"
        aria-label="Person search"
        onSubmit={(e) => {
          e.preventDefault();
          go(draft.trim(), 0);
        }}
      >
        <div class="field wide">
          <label for="person-search">Search persons</label>
          <input
            id="person-search"
            type="search"
            value={draft}
            placeholder="email (part of it), a distinct id, or a person uuid"
            onInput={(e) => setDraft(e.currentTarget.value)}
          />
        </div>
        <div class="actions">
          <button type="submit">Search</button>
        </div>
      </form>
      {persons.isPending ? (
        <Loading what="persons" />
      ) : persons.isError ? (
        <Failure error={persons.error} />
      ) : persons.data.results.length === 0 ? (
        <Empty>
          {search ? `No person matches “${search}”.` : 'No persons yet: capture an event.'}
        </Empty>
      ) : (
        <>
          <table>
            <caption class="visually-hidden">Persons, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Person</th>
                <th scope="col">Distinct ids</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {persons.data.results.map((p) => (
                <tr key={p.uuid}>
                  <td>
                    <Link href={`/persons/${p.uuid}`}>{p.name}</Link>
                  </td>
                  <td>
                    <code>{p.distinct_ids.slice(0, 3).join(', ')}</code>
                    {p.distinct_ids.length > 3 ? ` and ${p.distinct_ids.length - 3} more` : ''}
                  </td>
                  <td>
                    <LocalTime iso={p.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav class="actions pager" aria-label="Pages of persons">
            <button type="button" disabled={offset === 0} onClick={() => go(search, offset - PAGE)}>
              Previous
            </button>
            <span>
              {offset + 1}–{offset + persons.data.results.length} of {persons.data.count}
            </span>
            <button
              type="button"
              disabled={offset + PAGE >= persons.data.count}
              onClick={() => go(search, offset + PAGE)}
            >
              Next
            </button>
          </nav>
        </>
      )}
    </section>
  );
}
