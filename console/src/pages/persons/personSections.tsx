import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter-preact';
import { api, unwrap } from '../../api/client.ts';
import { LocalTime } from '../../localTime.tsx';
import { Empty, Failure, Loading } from '../../states.tsx';
import { EVENTS_SHOWN, type Event, type Person } from './personData.ts';
import { shown } from './propertyChanges.ts';

/** The audit trail's page: the API's page size maximum is 1000; a person's own changes are usually few. */
const AUDIT_SHOWN = 100;
const EVENTS_LISTED = 50;

export function DistinctIds({ person }: { person: Person }) {
  return (
    <section aria-labelledby="distinct-ids">
      <h2 id="distinct-ids">Distinct ids</h2>
      <ul class="plain">
        {person.distinct_ids.map((id) => (
          <li key={id}>
            <code>{id}</code>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function Cohorts({ projectId, person }: { projectId: number; person: Person }) {
  const cohorts = useQuery({
    queryKey: ['person', projectId, person.uuid, 'cohorts'],
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/persons/cohorts/', {
          params: { path: { project_id: String(projectId) }, query: { person_id: person.uuid } },
        }),
      ).results,
  });
  return (
    <section aria-labelledby="cohorts">
      <h2 id="cohorts">Cohorts</h2>
      {cohorts.isPending ? (
        <Loading what="cohorts" />
      ) : cohorts.isError ? (
        <Failure error={cohorts.error} />
      ) : cohorts.data.length === 0 ? (
        <Empty>In no cohort.</Empty>
      ) : (
        <ul class="plain">
          {cohorts.data.map((c) => (
            <li key={c.id}>
              <Link href={`/cohorts/${c.id}`}>{c.name}</Link>{' '}
              {c.is_static ? '(static)' : '(dynamic)'}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function PersonEvents({
  events,
}: {
  events: { isPending: boolean; isError: boolean; error: unknown; data?: Event[] };
}) {
  return (
    <section aria-labelledby="person-events">
      <h2 id="person-events">Events</h2>
      {events.isPending ? (
        <Loading what="events" />
      ) : events.isError || !events.data ? (
        <Failure error={events.error} />
      ) : events.data.length === 0 ? (
        <Empty>No events yet.</Empty>
      ) : (
        <>
          <table>
            <caption class="visually-hidden">The person's newest events</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Distinct id</th>
              </tr>
            </thead>
            <tbody>
              {events.data.slice(0, EVENTS_LISTED).map((e) => (
                <tr key={e.id}>
                  <td>
                    <LocalTime iso={e.timestamp} />
                  </td>
                  <td>
                    <Link href={`/events/${e.id}`}>{e.event}</Link>
                  </td>
                  <td>
                    <code>{e.distinct_id}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {events.data.length > EVENTS_LISTED && (
            <p class="help">
              The newest {EVENTS_LISTED} of {events.data.length === EVENTS_SHOWN ? 'over ' : ''}
              {events.data.length} events.
            </p>
          )}
        </>
      )}
    </section>
  );
}

type Change = { field: string | null; before: unknown; after: unknown };
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A `properties` change (before/after objects) as one line per property that differs; any other change as one line. */
function changeLines(c: Change): string[] {
  if (c.field === 'properties' && (isRecord(c.before) || isRecord(c.after))) {
    const before = isRecord(c.before) ? c.before : {};
    const after = isRecord(c.after) ? c.after : {};
    return [...new Set([...Object.keys(before), ...Object.keys(after)])]
      .sort()
      .filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]))
      .map((k) => `${k}: ${shown(before[k] ?? null)} → ${shown(after[k] ?? null)}`);
  }
  return [`${c.field ?? ''}${c.field ? ': ' : ''}${shown(c.before)} → ${shown(c.after)}`];
}

/** Who changed what through the API (update, delete property, split, delete), from the log. */
export function AuditTrail({ projectId, person }: { projectId: number; person: Person }) {
  const activity = useQuery({
    queryKey: ['person', projectId, person.uuid, 'activity'],
    queryFn: async () =>
      unwrap(
        await api.GET('/api/projects/{project_id}/persons/{id}/activity/', {
          params: {
            path: { project_id: String(projectId), id: person.uuid },
            query: { limit: AUDIT_SHOWN },
          },
        }),
      ),
  });
  return (
    <section aria-labelledby="audit-trail">
      <h2 id="audit-trail">Audit trail</h2>
      {activity.isPending ? (
        <Loading what="the audit trail" />
      ) : activity.isError ? (
        <Failure error={activity.error} />
      ) : activity.data.results.length === 0 ? (
        <Empty>No one changed this person through the API.</Empty>
      ) : (
        <table>
          <caption class="visually-hidden">Changes made through the API, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
            </tr>
          </thead>
          <tbody>
            {activity.data.results.map((entry) => (
              <tr key={entry.id}>
                <td>
                  <LocalTime iso={entry.created_at} />
                </td>
                <td>{entry.user?.email ?? 'unknown'}</td>
                <td>
                  {entry.activity.replace('_', ' ')}
                  <ul class="plain">
                    {entry.detail.changes.flatMap(changeLines).map((line) => (
                      <li key={line}>{line}</li>
                    ))}
                  </ul>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {activity.data && activity.data.total_count > AUDIT_SHOWN && (
        <p class="help">
          The newest {AUDIT_SHOWN} of {activity.data.total_count} changes.
        </p>
      )}
    </section>
  );
}
