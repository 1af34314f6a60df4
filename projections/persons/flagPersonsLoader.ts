import DataLoader from 'dataloader';
import type { PersonForFlags, PersonsReader } from './personsReader.ts';

/** distinct ids one query loads at most (a larger batch is split) */
const MAX_BATCH = 100;

export type FlagPersons = Readonly<{
  /** the person of `distinctId` as flag evaluation reads it; null when no person has that id */
  personForFlags(projectId: number, distinctId: string): Promise<PersonForFlags | null>;
}>;

type Key = Readonly<{ projectId: number; distinctId: string }>;

/**
 * Flag evaluation's person loads, gathered over one turn of the event loop into one query per
 * project (`personsForFlags`): under load every `/decide` that needs stored properties would
 * otherwise send a statement of its own, and a query's round trip — its socket write, the
 * protocol, a pooled connection — cost the main thread more than the evaluation it feeds.
 * Not cached: each answer reads the read model as it is.
 */
export function flagPersonsLoader(reader: Pick<PersonsReader, 'personsForFlags'>): FlagPersons {
  const loader = new DataLoader<Key, PersonForFlags | null>(
    async (keys) => {
      const byProject = new Map<number, string[]>();
      for (const { projectId, distinctId } of keys) {
        const ids = byProject.get(projectId) ?? [];
        ids.push(distinctId);
        byProject.set(projectId, ids);
      }
      const found = new Map(
        await Promise.all(
          [...byProject].map(
            async ([projectId, ids]) =>
              [projectId, await reader.personsForFlags(projectId, ids)] as const,
          ),
        ),
      );
      return keys.map((k) => found.get(k.projectId)?.get(k.distinctId) ?? null);
    },
    {
      cache: false,
      maxBatchSize: MAX_BATCH,
      // the requests of one turn arrive in separate I/O callbacks: wait for the turn's end
      batchScheduleFn: (dispatch) => setImmediate(dispatch),
    },
  );
  return { personForFlags: (projectId, distinctId) => loader.load({ projectId, distinctId }) };
}
