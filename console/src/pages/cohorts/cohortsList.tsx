import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter-preact';
import { api, type Schemas, unwrap } from '../../api/client.ts';
import { useProjectId } from '../../auth.ts';
import { LocalTime } from '../../localTime.tsx';
import { Empty, Failure, Loading } from '../../states.tsx';
import { useCanWriteCohorts } from './cohortApi.ts';

/** the cohorts listed (the API pages at up to 1000) */
const SHOWN = 200;

type Counted = Pick<Schemas['Cohort'], 'is_static' | 'is_calculating' | 'count'>;
export const kindOf = (c: Counted) => (c.is_static ? 'Static' : 'Dynamic');
export const membersOf = (c: Counted) =>
  c.is_calculating && c.count === null ? 'calculating…' : String(c.count ?? '—');

/** `/cohorts`: the project's cohorts, newest first, with their kind and member count. */
export function CohortsList() {
  const projectId = useProjectId()!;
  const canWrite = useCanWriteCohorts();
  const cohorts = useQuery({
    queryKey: ['cohorts', projectId],
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/cohorts/', {
          params: { path: { project_id: String(projectId) }, query: { limit: SHOWN } },
        }),
      ),
  });
  return (
    <section aria-labelledby="page-title">
      <div class="title-row">
        <h1 id="page-title">Cohorts</h1>
        {canWrite && <Link href="/cohorts/new">New cohort</Link>}
      </div>
      {cohorts.isPending ? (
        <Loading what="cohorts" />
      ) : cohorts.isError ? (
        <Failure error={cohorts.error} />
      ) : cohorts.data.results.length === 0 ? (
        <Empty>No cohorts in this project yet.</Empty>
      ) : (
        <>
          <table>
            <caption class="visually-hidden">Cohorts</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Members</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {cohorts.data.results.map((c) => (
                <tr key={c.id}>
                  <td>
                    <Link href={`/cohorts/${c.id}`}>{c.name}</Link>
                  </td>
                  <td>{kindOf(c)}</td>
                  <td>{membersOf(c)}</td>
                  <td>
                    <LocalTime iso={c.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {cohorts.data.count > SHOWN && (
            <p class="help">
              The first {SHOWN} of {cohorts.data.count} cohorts.
            </p>
          )}
        </>
      )}
    </section>
  );
}
