import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter-preact';
import type { Schemas } from '../../api/client.ts';
import { useProjectId } from '../../auth.ts';
import { Empty, Failure, Loading } from '../../states.tsx';

/** Persons one list shows: the legacy actors endpoints' default page (their maximum is 1,000). */
export const ACTORS_PAGE = 100;

/**
 * The persons behind one point, step or cell, from the legacy actors endpoint `load` asks (persons/trends/,
 * persons/funnel/, persons/retention/): the first page, and how many more there are.
 */
export function ActorsList({
  title,
  queryKey,
  load,
}: {
  title: string;
  queryKey: readonly unknown[];
  load: (projectId: string) => Promise<Schemas['Actors']>;
}) {
  const projectId = useProjectId()!;
  const actors = useQuery({
    queryKey: ['insight-actors', projectId, ...queryKey],
    queryFn: () => load(String(projectId)),
  });
  return (
    <section class="actors" aria-labelledby="actors-title">
      <h2 id="actors-title">Persons: {title}</h2>
      {actors.isPending ? (
        <Loading what="the persons" />
      ) : actors.isError ? (
        <Failure error={actors.error} />
      ) : (
        <People page={actors.data} />
      )}
    </section>
  );
}

function People({ page }: { page: Schemas['Actors'] }) {
  const people = page.results.flatMap((r) => r.people);
  if (people.length === 0) return <Empty>No persons here.</Empty>;
  return (
    <>
      <ul class="people">
        {people.map((p) => {
          const distinctId = p.distinct_ids[0];
          return (
            <li key={p.uuid}>
              {distinctId ? (
                <Link href={`/persons/${encodeURIComponent(distinctId)}`}>{p.name}</Link>
              ) : (
                p.name
              )}
            </li>
          );
        })}
      </ul>
      {page.next ? (
        <p class="help">
          The first {people.length} persons; the API lists the rest (limit and offset, or
          format=csv).
        </p>
      ) : null}
      {page.missing_persons > 0 ? (
        <p class="help">{page.missing_persons} more are counted but not yet in the persons list.</p>
      ) : null}
    </>
  );
}
