import { afterAll, describe, it } from 'vitest';
import { createEsdbEventStore } from '../../src/eventStore/esdbEventStore.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { appendManyContract, eventStoreContract } from './eventStoreContract.ts';

/**
 * Runs only with EVENTSTORE_URL set (e.g. esdb://localhost:2113?tls=false from docker-compose.dev.yml);
 * no EventStoreDB server can run on the CI machine.
 */
const url = process.env.EVENTSTORE_URL;
const stores: EventStore[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
});

if (url) {
  const open = async () => {
    const store = createEsdbEventStore(url);
    stores.push(store);
    return store;
  };
  eventStoreContract('eventstoredb', open);
  appendManyContract('eventstoredb (stream by stream)', open);
} else {
  describe('event store contract: eventstoredb', () => {
    it.skip('needs EVENTSTORE_URL (see README: "Running on the server stack")', () => undefined);
  });
}
