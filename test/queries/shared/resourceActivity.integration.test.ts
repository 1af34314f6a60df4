import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlagFields } from '../../../commands/featureFlags/model/featureFlag.ts';
import { featureFlagStream } from '../../../commands/featureFlags/model/featureFlag.ts';
import { allFlagsActivity, flagActivity } from '../../../queries/featureFlags/flagActivity.ts';
import { createPool } from '../../../src/db/postgres.ts';
import type { EventStore } from '../../../src/eventStore/eventStore.ts';
import {
  createPostgresEventStore,
  eventLogSchema,
} from '../../../src/eventStore/postgresEventStore.ts';
import { createTestDatabase } from '../../support/testDatabase.ts';

// The shared activity readers over a real log: which streams are a project's. Flags stand for
// every resource (cohorts, annotations, actions and insights use the same readers).

let store: EventStore & { close: () => Promise<void> };
let end: () => Promise<void>;
beforeAll(async () => {
  const pool = createPool(await createTestDatabase(), 4);
  await pool.query(eventLogSchema);
  store = createPostgresEventStore(pool);
  end = () => pool.end();
});
afterAll(async () => {
  await store?.close();
  await end?.();
});

const users = { activityUsers: async () => new Map() };
const page = { limit: 100, offset: 0 };
const fields = (key: string): FlagFields => ({
  name: '',
  key,
  filters: {},
  active: true,
  ensure_experience_continuity: false,
  rollback_conditions: null,
  performed_rollback: false,
  tags: [],
  analytics_dashboards: [],
  has_enriched_analytics: false,
});
const at = (projectId: number | undefined) => ({
  ...(projectId === undefined ? {} : { projectId }),
  occurredAt: '2026-01-02T03:04:05.000Z',
});
async function flag(flagId: number, projectId: number, patchedIn: number | undefined) {
  await store.appendToStream(
    featureFlagStream(flagId),
    [
      {
        type: 'FeatureFlagCreated',
        data: {
          flagId,
          projectId,
          fields: fields(`f${flagId}`),
          deleted: false,
          createdAt: '2026-01-02T03:04:05.000Z',
          createdByUserId: null,
        },
        metadata: at(projectId),
      },
      {
        type: 'FeatureFlagPatched',
        data: { flagId, changes: { active: false } },
        metadata: at(patchedIn),
      },
    ],
    { expectedRevision: 'any' },
  );
}
const summary = (p: { results: { item_id: string; activity: string }[] } | undefined) =>
  p?.results.map((e) => `${e.item_id} ${e.activity}`);

describe('activity readers: a stream is the project of its Created event', () => {
  it('lists an event written without a project in its metadata, in one flag and in all flags alike', async () => {
    await flag(9101, 71, undefined);
    const one = await flagActivity(store, users, 71, 9101, page);
    expect(summary(one)).toEqual(['9101 updated', '9101 created']);
    expect(summary(await allFlagsActivity(store, users, 71, page))).toEqual(summary(one));
  });

  it("keeps another project's flag out, even where a later event's metadata names this project", async () => {
    await flag(9201, 72, 73);
    expect(await flagActivity(store, users, 73, 9201, page)).toBeUndefined();
    expect(await allFlagsActivity(store, users, 73, page)).toEqual({ count: 0, results: [] });
    expect(summary(await allFlagsActivity(store, users, 72, page))).toEqual(['9201 created']);
  });
});
