import { useQuery } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import { Link, useLocation, useSearch } from 'wouter-preact';
import { api, type Schemas, unwrap } from '../api/client.ts';
import { useProjectId } from '../auth.ts';
import { LocalTime } from '../localTime.tsx';
import { Empty, Failure, Loading } from '../states.tsx';
import { type EventFilters, filtersOf, listQueryOf, searchOf } from './eventFilters.ts';

/**
 * How often the live table asks for the newest page. The list waits for what was captured before it is asked
 * (awaitCapturedEvents), so an event shows within this plus one projection step.
 */
const LIVE_MS = 500;

const FIELDS: { name: keyof EventFilters; label: string; hint: string }[] = [
  { name: 'event', label: 'Event name', hint: 'e.g. $pageview' },
  { name: 'distinct_id', label: 'Person (distinct id)', hint: '' },
  { name: 'property', label: 'Property', hint: 'key=value, or key (is set)' },
  { name: 'after', label: 'After', hint: 'ISO time or -1h, -7d' },
  { name: 'before', label: 'Before', hint: 'ISO time or -1h' },
];

function Filters({ filters }: { filters: EventFilters }) {
  const [, navigate] = useLocation();
  const [draft, setDraft] = useState(filters);
  const set = (name: keyof EventFilters) => (e: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [name]: e.currentTarget.value });
  return (
    <form
      class="filters"
      aria-label="Event filters"
      onSubmit={(e) => {
        e.preventDefault();
        navigate(`/events${searchOf(draft)}`);
      }}
    >
      {FIELDS.map((f) => (
        <div class="field" key={f.name}>
          <label for={`f-${f.name}`}>{f.label}</label>
          <input
            id={`f-${f.name}`}
            value={draft[f.name]}
            placeholder={f.hint}
            onInput={set(f.name)}
          />
        </div>
      ))}
      <div class="field wide">
        <label for="f-where">HogQL where</label>
        <input
          id="f-where"
          class="code"
          value={draft.where}
          placeholder="properties.$browser = 'Chrome'"
          onInput={set('where')}
        />
      </div>
      <div class="actions">
        <button type="submit">Apply filters</button>
        <button type="button" onClick={() => navigate('/events')}>
          Clear
        </button>
      </div>
    </form>
  );
}

function EventRows({ events }: { events: Schemas['Event'][] }) {
  return (
    <table class="events">
      <caption class="visually-hidden">Events, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Event</th>
          <th scope="col">Person</th>
          <th scope="col">URL</th>
        </tr>
      </thead>
      <tbody>
        {events.map((e) => (
          <tr key={e.id}>
            <td>
              <LocalTime iso={e.timestamp} />
            </td>
            <td>
              <Link href={`/events/${e.id}`}>{e.event}</Link>
            </td>
            <td>
              <Link href={`/persons/${encodeURIComponent(e.distinct_id)}`}>{e.distinct_id}</Link>
            </td>
            <td class="url">{String(e.properties.$current_url ?? '')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** `/events`: the newest 100 events matching the filters, asked again every second while live. */
export function EventsPage() {
  const projectId = useProjectId()!;
  const search = useSearch();
  const filters = filtersOf(search);
  const [live, setLive] = useState(true);
  const query = listQueryOf(filters);
  const events = useQuery({
    queryKey: ['events', projectId, query],
    refetchInterval: live ? LIVE_MS : false,
    placeholderData: (previous) => previous,
    queryFn: async () =>
      // Without `select` the list answers EventsPage (the other members are `select` and CSV answers).
      (
        unwrap(
          await api.GET('/api/projects/{project_id}/events/', {
            params: { path: { project_id: String(projectId) }, query },
          }),
        ) as Schemas['EventsPage']
      ).results,
  });
  return (
    <section aria-labelledby="page-title">
      <div class="title-row">
        <h1 id="page-title">Events</h1>
        <button type="button" aria-pressed={live} onClick={() => setLive(!live)}>
          {live ? 'Live: on' : 'Live: paused'}
        </button>
      </div>
      <Filters key={search} filters={filters} />
      {events.isPending ? (
        <Loading what="events" />
      ) : events.isError ? (
        <Failure error={events.error} />
      ) : events.data.length === 0 ? (
        <Empty>No events match. New events appear here as they are captured.</Empty>
      ) : (
        <EventRows events={events.data} />
      )}
    </section>
  );
}
