import type { ProjectApiKeyReset } from '../../commands/access/model/accessEvents.ts';
import type { EventStore, Subscription } from '../../src/eventStore/eventStore.ts';

const RESET: ProjectApiKeyReset['type'] = 'ProjectApiKeyReset';

/**
 * Calls `onReset` after each project key reset of the log has reached the access read model,
 * whoever appended it: this server's own reset_token forgets its caches itself, but a reset by
 * the CLI or another server reaches this process only through the log. Until then (a few
 * milliseconds, or the subscription's recovery) the old key lives at most as long as the
 * resolver's cache entry (30 s).
 */
export async function watchProjectKeyResets(deps: {
  store: Pick<EventStore, 'subscribeToAll' | 'headPosition'>;
  /** bounded wait until the access read model has applied the event */
  awaitApplied: (position: bigint) => Promise<unknown>;
  onReset: () => void;
}): Promise<Subscription> {
  const head = await deps.store.headPosition();
  return deps.store.subscribeToAll(
    async (event) => {
      await deps.awaitApplied(event.position);
      deps.onReset();
    },
    { after: head < 0n ? 'start' : head, filter: { eventTypes: [RESET] } },
  );
}
