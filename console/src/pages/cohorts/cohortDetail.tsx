import { useQuery } from '@tanstack/react-query';
import { Link, useLocation, useSearch } from 'wouter-preact';
import { api, unwrap } from '../../api/client.ts';
import { useProjectId } from '../../auth.ts';
import { Empty, Failure, Loading } from '../../states.tsx';
import { kindOf, membersOf } from './cohortsList.tsx';

/** members per page (the API allows up to 1000) */
const PAGE = 100;
/** a dynamic cohort being calculated is asked again this often, so its members show when they are known */
const CALCULATING_MS = 1000;

function Members({
  projectId,
  id,
  calculating,
}: {
  projectId: number;
  id: number;
  calculating: boolean;
}) {
  const [, navigate] = useLocation();
  const offset = Math.max(0, Number(new URLSearchParams(useSearch()).get('offset')) || 0);
  const members = useQuery({
    queryKey: ['cohort-persons', projectId, id, offset],
    refetchInterval: calculating ? CALCULATING_MS : false,
    placeholderData: (previous) => previous,
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/cohorts/{id}/persons/', {
          params: { path: { project_id: String(projectId), id }, query: { limit: PAGE, offset } },
        }),
      ) as {
        count: number;
        results: { id: number; uuid: string; name: string; distinct_ids: string[] }[];
      },
  });
  if (members.isPending) return <Loading what="members" />;
  if (members.isError) return <Failure error={members.error} />;
  const { count, results } = members.data;
  if (results.length === 0)
    return (
      <Empty>{calculating ? 'Calculating the members…' : 'This cohort has no members.'}</Empty>
    );
  const page = (to: number) => navigate(`/cohorts/${id}${to > 0 ? `?offset=${to}` : ''}`);
  return (
    <>
      <table>
        <caption class="visually-hidden">Members</caption>
        <thead>
          <tr>
            <th scope="col">Person</th>
            <th scope="col">Distinct ids</th>
          </tr>
        </thead>
        <tbody>
          {results.map((p) => (
            <tr key={p.uuid}>
              <td>
                <Link href={`/persons/${encodeURIComponent(p.distinct_ids[0] ?? p.uuid)}`}>
                  {p.name}
                </Link>
              </td>
              <td>{p.distinct_ids.join(', ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="help">
        {offset + 1}–{offset + results.length} of {count}
      </p>
      <nav aria-label="Members pages" class="actions">
        {offset > 0 && (
          <button type="button" onClick={() => page(Math.max(0, offset - PAGE))}>
            Previous
          </button>
        )}
        {offset + results.length < count && (
          <button type="button" onClick={() => page(offset + PAGE)}>
            Next
          </button>
        )}
      </nav>
    </>
  );
}

/** `/cohorts/:id`: a cohort, its definition and its members (paged in the URL: `?offset=`). */
export function CohortDetail({ id }: { id: number }) {
  const projectId = useProjectId()!;
  const cohort = useQuery({
    queryKey: ['cohort', projectId, id],
    refetchInterval: (q) => (q.state.data?.is_calculating ? CALCULATING_MS : false),
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/cohorts/{id}/', {
          params: { path: { project_id: String(projectId), id } },
        }),
      ),
  });
  if (cohort.isPending) return <Loading what="the cohort" />;
  if (cohort.isError) return <Failure error={cohort.error} />;
  const c = cohort.data;
  return (
    <section aria-labelledby="page-title">
      <p>
        <Link href="/cohorts">← All cohorts</Link>
      </p>
      <h1 id="page-title">{c.name}</h1>
      {c.description && <p>{c.description}</p>}
      <dl class="facts">
        <dt>Kind</dt>
        <dd>{kindOf(c)}</dd>
        <dt>Members</dt>
        <dd>{membersOf(c)}</dd>
        <dt>Last calculated</dt>
        <dd>
          {c.last_calculation ? (
            <time dateTime={c.last_calculation}>
              {new Date(c.last_calculation).toLocaleString()}
            </time>
          ) : (
            '—'
          )}
        </dd>
        {!c.is_static && (
          <>
            <dt>Filters</dt>
            <dd>
              <code>{JSON.stringify(c.filters.properties)}</code>
            </dd>
          </>
        )}
      </dl>
      <h2>Members</h2>
      <Members projectId={projectId} id={id} calculating={c.is_calculating} />
    </section>
  );
}
