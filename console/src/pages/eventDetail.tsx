import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter-preact';
import { api, unwrap } from '../api/client.ts';
import { useProjectId } from '../auth.ts';
import { LocalTime } from '../localTime.tsx';
import { PropertiesTable } from '../propertiesTable.tsx';
import { Failure, Loading } from '../states.tsx';

/** `/events/:id`: one event, every property, and a link to its person. */
export function EventDetail({ id }: { id: string }) {
  const projectId = useProjectId()!;
  const event = useQuery({
    queryKey: ['event', projectId, id],
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/events/{id}/', {
          params: { path: { project_id: String(projectId), id } },
        }),
      ),
  });
  if (event.isPending) return <Loading what="the event" />;
  if (event.isError) return <Failure error={event.error} />;
  const e = event.data;
  return (
    <section aria-labelledby="page-title">
      <p>
        <Link href="/events">← All events</Link>
      </p>
      <h1 id="page-title">{e.event}</h1>
      <dl class="facts">
        <dt>Time</dt>
        <dd>
          <LocalTime iso={e.timestamp} />
        </dd>
        <dt>Person</dt>
        <dd>
          <Link href={`/persons/${encodeURIComponent(e.distinct_id)}`}>{e.distinct_id}</Link>
        </dd>
        <dt>UUID</dt>
        <dd>
          <code>{e.id}</code>
        </dd>
      </dl>
      <h2>Properties</h2>
      <PropertiesTable properties={e.properties} empty="This event has no properties." />
    </section>
  );
}
