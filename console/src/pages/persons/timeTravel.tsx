import { useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { LocalTime } from '../../localTime.tsx';
import { PropertiesTable } from '../../propertiesTable.tsx';
import { Empty, Failure, Loading } from '../../states.tsx';
import { type Event, type Person, usePersonAsOf, usePropertiesTimeline } from './personData.ts';
import { changesByKey, isoOfLocal, localOfIso, shown } from './propertyChanges.ts';

/** Changes listed per property, newest first; older ones are counted, not listed. */
const CHANGES_SHOWN = 20;

/** The time control: a moment in the URL (`?as_of=`), so it is bookmarkable and the back button steps through it. */
function TimeControl({ path, asOf }: { path: string; asOf: string | null }) {
  const [, navigate] = useLocation();
  const [draft, setDraft] = useState(asOf ? localOfIso(asOf) : '');
  return (
    <form
      class="filters"
      aria-label="Time travel"
      onSubmit={(e) => {
        e.preventDefault();
        const iso = isoOfLocal(draft);
        navigate(iso ? `${path}?as_of=${encodeURIComponent(iso)}` : path);
      }}
    >
      <div class="field">
        <label for="as-of">As of (your local time)</label>
        <input
          id="as-of"
          type="datetime-local"
          step={1}
          value={draft}
          onInput={(e) => setDraft(e.currentTarget.value)}
        />
      </div>
      <div class="actions">
        <button type="submit">Show as of</button>
        <button type="button" disabled={asOf === null} onClick={() => navigate(path)}>
          Now
        </button>
      </div>
    </form>
  );
}

/** The properties now or as of the chosen moment (the person's own fold of the log, re-run up to then). */
function PropertiesAsOf({
  projectId,
  person,
  asOf,
}: {
  projectId: number;
  person: Person;
  asOf: string | null;
}) {
  const past = usePersonAsOf(projectId, person.uuid, asOf);
  if (asOf === null)
    return (
      <PropertiesTable
        properties={person.properties}
        caption="Properties now"
        empty="Properties now: no properties."
      />
    );
  const caption = `Properties as of ${new Date(asOf).toLocaleString()}`;
  if (past.isPending) return <Loading what="the person as it was then" />;
  if (past.isError) return <Failure error={past.error} />;
  if (past.data === null) return <Empty>{caption}: this person did not exist yet.</Empty>;
  return (
    <PropertiesTable
      properties={past.data.properties}
      caption={caption}
      empty={`${caption}: no properties.`}
    />
  );
}

/** Each property's changes: the value before and after, the event that set it, when; a link to that moment. */
function PropertyTimeline(props: {
  projectId: number;
  person: Person;
  path: string;
  keys: string[];
  eventAt: (timestamp: string) => Event | undefined;
}) {
  const timeline = usePropertiesTimeline(props.projectId, props.person.uuid, props.keys);
  if (props.keys.length === 0) return <Empty>No properties, so no changes.</Empty>;
  if (timeline.isPending) return <Loading what="the property timeline" />;
  if (timeline.isError) return <Failure error={timeline.error} />;
  const byKey = changesByKey(timeline.data.points, props.keys);
  const rows = [...byKey.values()].flatMap((changes) => changes.slice(0, CHANGES_SHOWN));
  const hidden = [...byKey.values()].reduce(
    (n, changes) => n + Math.max(0, changes.length - CHANGES_SHOWN),
    0,
  );
  if (rows.length === 0)
    return (
      <Empty>
        No captured event set these properties (they were set through the API: see the audit trail).
      </Empty>
    );
  return (
    <>
      <table class="timeline">
        <caption>Property changes by captured events, newest first per property</caption>
        <thead>
          <tr>
            <th scope="col">Property</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
            <th scope="col">Set by</th>
            <th scope="col">When</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((c) => {
            const event = props.eventAt(c.timestamp);
            return (
              <tr key={`${c.key}@${c.timestamp}`}>
                <th scope="row">{c.key}</th>
                <td>
                  <code>{shown(c.before)}</code>
                </td>
                <td>
                  <code>{shown(c.after)}</code>
                </td>
                <td>
                  {event ? (
                    <Link href={`/events/${event.id}`}>{event.event}</Link>
                  ) : (
                    'an older event'
                  )}
                </td>
                <td>
                  <Link
                    href={`${props.path}?as_of=${encodeURIComponent(c.timestamp)}`}
                    aria-label={`As of ${new Date(c.timestamp).toLocaleString()} (${c.key} became ${shown(c.after)})`}
                  >
                    <LocalTime iso={c.timestamp} />
                  </Link>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {hidden > 0 && <p class="help">{hidden} older changes are not listed.</p>}
    </>
  );
}

/** Time travel: the control, the properties as of then, and the timeline of every property's changes. */
export function TimeTravel(props: {
  projectId: number;
  person: Person;
  path: string;
  asOf: string | null;
  eventAt: (timestamp: string) => Event | undefined;
}) {
  const past = usePersonAsOf(props.projectId, props.person.uuid, props.asOf);
  const keys = [
    ...new Set([
      ...Object.keys(props.person.properties),
      ...Object.keys(past.data?.properties ?? {}),
    ]),
  ].sort();
  return (
    <section aria-labelledby="time-travel">
      <h2 id="time-travel">Properties and time travel</h2>
      <TimeControl key={props.asOf ?? ''} path={props.path} asOf={props.asOf} />
      <PropertiesAsOf projectId={props.projectId} person={props.person} asOf={props.asOf} />
      <h3>Timeline</h3>
      <PropertyTimeline {...props} keys={keys} />
    </section>
  );
}
