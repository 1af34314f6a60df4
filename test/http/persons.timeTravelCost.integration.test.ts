import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDeps } from '../../commands/access/accessDeps.ts';
import { createProject } from '../../commands/access/createProject.ts';
import {
  captureStream,
  type EventCapturedData,
} from '../../commands/capture/model/eventCaptured.ts';
import { personEventTypes, personStream } from '../../commands/persons/model/personEvents.ts';
import { personUuidFor } from '../../projections/persons/personsFold.ts';
import { personAsOf } from '../../queries/personTimeTravel/personAsOf.ts';
import { personHistory } from '../../queries/personTimeTravel/personHistory.ts';
import { timeTravelDeps } from '../../queries/personTimeTravel/personSlice.ts';
import type { AppContext } from '../../src/appContext.ts';
import type { EventStore, ReadAllOptions } from '../../src/eventStore/eventStore.ts';
import { capture } from '../support/capture.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { adminUserId } from './helpers.ts';

/**
 * Time travel costs the person, not the log (issue #8): a log of many unrelated events, a person of
 * interest, another project's person. Reads go through a counting wrapper of the service's store.
 */
let t: TestService;
let foreignId: number;
let targetId: number;
const UNRELATED = 20_000;

/** The service's log, counting what time travel reads from it. */
function counting() {
  const store: EventStore = t.service.ctx.store;
  const reads = { streams: [] as string[], streamEvents: 0, all: [] as ReadAllOptions[] };
  const wrapped: EventStore = {
    ...store,
    readStream: async (name, options) => {
      const events = await store.readStream(name, options);
      reads.streams.push(name);
      reads.streamEvents += events.length;
      return events as never;
    },
    readAll: async (options) => {
      reads.all.push(options ?? {});
      return store.readAll(options);
    },
  };
  const ctx: AppContext = { ...t.service.ctx, store: wrapped };
  return { deps: timeTravelDeps(ctx), reads };
}

const at = (day: number) => `2024-03-${String(day).padStart(2, '0')}T10:00:00.000Z`;
const item = (event: string, distinctId: string, day: number, properties = {}) => ({
  event,
  timestamp: at(day),
  properties: { distinct_id: distinctId, $geoip_disable: true, ...properties },
});

beforeAll(async () => {
  t = await startTestService();
  const other = await createProject(accessDeps(t.service.ctx), {
    name: 'other',
    ownerUserId: await adminUserId(t),
  });
  await capture(t, [item('$pageview', 'foreign', 1)], { apiKey: other.projectApiKey });

  // Unrelated traffic, straight into the log: 2,000 distinct ids, some identified.
  const projectId = t.projectId;
  for (let from = 0; from < UNRELATED; from += 5000) {
    const byStream = new Map<
      string,
      { type: string; data: EventCapturedData; metadata: never }[]
    >();
    for (let i = from; i < from + 5000; i++) {
      const distinctId = i % 50 === 0 ? `user-${i % 2000}` : `noise-${i % 2000}`;
      const timestamp = at(1 + (i % 9));
      const data: EventCapturedData = {
        uuid: randomUUID(),
        projectId,
        event: i % 50 === 0 ? '$identify' : '$pageview',
        distinctId,
        properties:
          i % 50 === 0
            ? { $anon_distinct_id: `noise-${i % 2000}` }
            : { $set: { n: i }, $current_url: 'https://example.com' },
        timestamp,
        elementsChain: '',
        sentAt: null,
        receivedAt: timestamp,
        ip: null,
      };
      const stream = captureStream(projectId, distinctId);
      byStream.set(stream, [
        ...(byStream.get(stream) ?? []),
        { type: 'EventCaptured', data, metadata: { projectId, occurredAt: timestamp } as never },
      ]);
    }
    await t.service.ctx.store.appendMany(
      [...byStream].map(([streamName, events]) => ({
        streamName,
        events,
        expectedRevision: 'any' as const,
      })),
    );
  }
  for (const batch of [
    [item('$pageview', 'anon-c', 2, { $set: { plan: 'free' } })],
    [item('signed_up', 'user-c', 3, { $set: { email: 'c@example.com' } })],
    [item('$identify', 'user-c', 4, { $anon_distinct_id: 'anon-c' })],
    [item('$set', 'anon-c', 5, { $set: { plan: 'pro' } })],
  ])
    await capture(t, batch);

  const [newest] = await t.service.ctx.store.readAll({
    direction: 'backwards',
    before: 'end',
    maxCount: 1,
    filter: { eventTypes: ['EventCaptured', ...personEventTypes] },
  });
  expect(await t.service.runners.get('persons')!.waitFor(newest!.position, 120_000)).toBe(true);
  const find = async (projectId: number, distinctId: string) =>
    (await t.api('GET', `/api/projects/${projectId}/persons/?distinct_id=${distinctId}`)).body
      .results[0].id as number;
  foreignId = await find(other.projectId, 'foreign');
  targetId = await find(t.projectId, 'user-c');
}, 180_000);
afterAll(async () => t?.close());

describe('time travel reads the person, not the log', () => {
  it("another project's person: 404 without reading the log (only the newest-event probe of the read-your-writes wait)", async () => {
    const { deps, reads } = counting();
    expect(await personAsOf(deps, t.projectId, { kind: 'id', id: foreignId }, at(9))).toBeNull();
    expect(reads.streams).toEqual([]);
    expect(reads.all).toEqual([expect.objectContaining({ maxCount: 1, direction: 'backwards' })]);
    expect(
      (await t.api('GET', `/api/projects/${t.projectId}/persons/${foreignId}/?as_of=${at(9)}`))
        .status,
    ).toBe(404);
  });

  it(`as_of on a log of ${UNRELATED} unrelated events reads only the person's streams`, async () => {
    const { deps, reads } = counting();
    const person = await personAsOf(deps, t.projectId, { kind: 'id', id: targetId }, at(4));
    expect(person).toMatchObject({
      id: targetId,
      distinct_ids: ['user-c', 'anon-c'],
      properties: { plan: 'free', email: 'c@example.com' },
    });
    expect(new Set(reads.streams)).toEqual(
      new Set([
        captureStream(t.projectId, 'user-c'),
        captureStream(t.projectId, 'anon-c'),
        personStream(t.projectId, person!.uuid),
        personStream(t.projectId, personUuidFor(t.projectId, 'anon-c')), // anon-c's own person, merged away
      ]),
    );
    expect(reads.streamEvents).toBe(4);
    expect(reads.all).toHaveLength(1); // the newest-event probe
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/persons/${targetId}/?as_of=${encodeURIComponent(at(5))}`,
    );
    expect(res.body.properties.plan).toBe('pro');
  });

  it('person history and properties_timeline read the same few streams', async () => {
    const { deps, reads } = counting();
    const history = await personHistory(deps, t.projectId, 'anon-c');
    expect(history!.changes.map((c) => [c.property, c.after])).toContainEqual(['plan', 'pro']);
    expect(reads.streamEvents).toBe(4);
    const timeline = await t.api(
      'GET',
      `/api/projects/${t.projectId}/persons/${targetId}/properties_timeline/?date_from=2024-03-01&date_to=2024-03-09`,
    );
    expect(timeline.status, timeline.text).toBe(200);
    expect(timeline.body.points.length).toBeGreaterThan(0);
  });

  it('a read model built before the index existed answers 409 rebuild_required, until `rebuild persons`', async () => {
    await t.service.stores.pool.query('DELETE FROM person_identities WHERE id = 1');
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/persons/${targetId}/?as_of=${encodeURIComponent(at(5))}`,
    );
    expect(res.status, res.text).toBe(409);
    expect(res.body.code).toBe('rebuild_required');
  });
});
