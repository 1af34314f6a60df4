import { Link, useSearch } from 'wouter-preact';
import { allows, useCurrentKey, useProjectId, useSessionKey } from '../../auth.ts';
import { LocalTime } from '../../localTime.tsx';
import { Failure, Loading } from '../../states.tsx';
import { useLivePerson, usePersonEvents } from './personData.ts';
import { AuditTrail, Cohorts, DistinctIds, PersonEvents } from './personSections.tsx';
import { TimeTravel } from './timeTravel.tsx';

/**
 * `/persons/:ref[?as_of=ISO]`: one person (by id, uuid or distinct id) with its properties now or as of a moment,
 * each property's changes, its distinct ids, cohorts, events and audit trail. Sections the key's scopes cannot read
 * are left out.
 */
export function PersonPage({ personRef }: { personRef: string }) {
  const projectId = useProjectId()!;
  const scopes = useCurrentKey(useSessionKey()).data?.scopes ?? [];
  const asOf = new URLSearchParams(useSearch()).get('as_of');
  const person = useLivePerson(projectId, personRef);
  const canReadEvents = allows(scopes, 'query:read');
  const events = usePersonEvents(
    projectId,
    person.data?.uuid ?? '',
    canReadEvents && !!person.data,
  );
  if (person.isPending) return <Loading what="the person" />;
  if (person.isError) return <Failure error={person.error} />;
  const p = person.data;
  const byTime = new Map<number, NonNullable<typeof events.data>[number]>();
  for (const e of events.data ?? []) {
    const ms = Date.parse(e.timestamp);
    // Newest first: the last one seen at a time is the earliest, i.e. the first of a run.
    byTime.set(ms, e);
  }
  const path = `/persons/${encodeURIComponent(personRef)}`;
  return (
    <article aria-labelledby="page-title">
      <p>
        <Link href="/persons">← All persons</Link>
      </p>
      <h1 id="page-title">{p.name}</h1>
      <dl class="facts">
        <dt>UUID</dt>
        <dd>
          <code>{p.uuid}</code>
        </dd>
        <dt>Created</dt>
        <dd>
          <LocalTime iso={p.created_at} />
        </dd>
        <dt>Identified</dt>
        <dd>{p.is_identified ? 'yes' : 'no'}</dd>
      </dl>
      <TimeTravel
        projectId={projectId}
        person={p}
        path={path}
        asOf={asOf}
        eventAt={(timestamp) => byTime.get(Date.parse(timestamp))}
      />
      <DistinctIds person={p} />
      <Cohorts projectId={projectId} person={p} />
      {canReadEvents && <PersonEvents events={events} />}
      {allows(scopes, 'activity_log:read') && <AuditTrail projectId={projectId} person={p} />}
    </article>
  );
}
