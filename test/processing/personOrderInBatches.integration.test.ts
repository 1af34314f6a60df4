import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionOf } from '../../projections/persons/personsPartitions.ts';
import { capture } from '../support/capture.ts';
import { readModelsCaughtUp } from '../support/readModelsCaughtUp.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * Issue #27: persons keep the order of each distinct id's events however ingestion cuts and
 * spreads them — many distinct ids interleaved in one `/batch/`, one person's steps split over two
 * requests, 200 persons interleaved at random in batches of 100. PostHog orders events per
 * distinct id only (its Kafka key), so every step that depends on order is an event of the same
 * distinct id; the anonymous id's own event may land before or after the `$identify` that merges
 * it, and the expected person is the same either way. Seen as a user sees it: the persons API.
 *
 * Workers: with `INGESTION_WORKERS` > 1 each worker folds the distinct ids of its partition, so
 * the anonymous id, the user id and the alias of a story are folded by different workers whenever
 * they hash apart (each test asserts that some do): the merge is done by the user id's worker,
 * across partitions.
 */
const WORKER_COUNTS = [1, 2, 3];

type CaptureEvent = {
  uuid: string;
  event: string;
  timestamp: string;
  properties: Record<string, unknown>;
};

let clock = Date.parse('2025-03-01T12:00:00.000Z');
/** An event as posthog-js queues it: its own uuid (v7) and time, the library's properties. */
function jsEvent(
  distinctId: string,
  event: string,
  properties: Record<string, unknown> = {},
): CaptureEvent {
  clock += 10;
  return {
    uuid: uuidv7(),
    event,
    timestamp: new Date(clock).toISOString(),
    properties: { distinct_id: distinctId, $lib: 'web', $lib_version: '1.449.2', ...properties },
  };
}

type Journey = {
  anon: string;
  user: string;
  alias: string;
  /** events of the anonymous id, in order */
  anonEvents: CaptureEvent[];
  /** events of the user id, in order: the order this test is about */
  userEvents: CaptureEvent[];
};

/**
 * One user's story. Steps 2–5 only end as expected in this order: `k` set then unset (gone),
 * `j` unset then set again (there); `step` is the last step applied. Steps 1–3 and 4–7 are the two
 * halves when the story is split over two requests, so each key's set and unset cross the cut.
 */
function journey(tag: string): Journey {
  const anon = `${tag}-anon`;
  const user = `${tag}-user`;
  const alias = `${tag}-alias`;
  return {
    anon,
    user,
    alias,
    anonEvents: [jsEvent(anon, '$pageview', { $set: { anon_seen: true } })],
    userEvents: [
      jsEvent(user, '$identify', {
        $anon_distinct_id: anon,
        $set: { email: `${user}@example.com`, j: 'first', step: 1 },
      }),
      jsEvent(user, '$set', { $set: { k: 'set', step: 2 } }),
      jsEvent(user, '$set', { $unset: ['j'], $set: { step: 3 } }),
      jsEvent(user, '$set', { $unset: ['k'], $set: { step: 4 } }),
      jsEvent(user, '$set', { $set: { j: 'again', step: 5 } }),
      jsEvent(user, '$create_alias', { alias, $set: { step: 6 } }),
      jsEvent(user, '$pageview', { $set: { step: 7 } }),
    ],
  };
}

/** Round robin over the journeys' event lists: one event of each in turn, each list in order. */
/** How many stories have their user id in another partition than their anonymous id or alias. */
function acrossPartitions(
  journeys: readonly Journey[],
  projectId: number,
  workers: number,
): number {
  const at = (d: string) => partitionOf(projectId, d, workers);
  return journeys.filter((j) => at(j.user) !== at(j.anon) || at(j.user) !== at(j.alias)).length;
}

function interleave(lists: CaptureEvent[][]): CaptureEvent[] {
  const out: CaptureEvent[] = [];
  for (let i = 0; lists.some((l) => i < l.length); i++)
    for (const l of lists) if (i < l.length) out.push(l[i]!);
  return out;
}

/** A seeded random merge of the lists that keeps each list's order (mulberry32: the same every run). */
function shuffleKeepingOrder(lists: CaptureEvent[][], seed: number): CaptureEvent[] {
  let s = seed;
  const random = () => {
    s = (s + 0x6d2b79f5) | 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const queues = lists.filter((l) => l.length > 0).map((l) => [...l]);
  const out: CaptureEvent[] = [];
  while (queues.length > 0) {
    const i = Math.floor(random() * queues.length);
    out.push(queues[i]!.shift()!);
    if (queues[i]!.length === 0) queues.splice(i, 1);
  }
  return out;
}

type PersonView = {
  id: number;
  is_identified: boolean;
  distinct_ids: string[];
  properties: Record<string, unknown>;
};

/**
 * What is wrong with the person of a journey, as the persons API lists it (empty when nothing):
 * one identified person holding the three ids, with the properties of every step in order.
 */
function mismatches(j: Journey, byDistinctId: ReadonlyMap<string, PersonView>): string[] {
  const person = byDistinctId.get(j.user);
  if (!person) return [`${j.user}: no person`];
  const wrong: string[] = [];
  const ids = [...person.distinct_ids].sort();
  const expected = [j.alias, j.anon, j.user].sort();
  if (JSON.stringify(ids) !== JSON.stringify(expected))
    wrong.push(`${j.user}: distinct ids ${JSON.stringify(ids)}`);
  for (const other of [j.anon, j.alias])
    if (byDistinctId.get(other)?.id !== person.id)
      wrong.push(`${j.user}: ${other} is not on the same person`);
  if (!person.is_identified) wrong.push(`${j.user}: not identified`);
  const p = person.properties;
  const expectedProperties = {
    email: `${j.user}@example.com`,
    anon_seen: true,
    j: 'again',
    step: 7,
  };
  for (const [key, value] of Object.entries(expectedProperties))
    if (p[key] !== value) wrong.push(`${j.user}: ${key} is ${JSON.stringify(p[key])}`);
  if ('k' in p) wrong.push(`${j.user}: k is still there (${JSON.stringify(p.k)})`);
  return wrong;
}

describe.each(WORKER_COUNTS)(
  'persons keep each distinct id’s order with %i ingestion worker(s)',
  (workers) => {
    let t: TestService;
    beforeAll(async () => {
      t = await startTestService({ INGESTION_WORKERS: String(workers) });
    });
    afterAll(async () => {
      await t?.close();
    });

    /** Every person of the project, by each of its distinct ids, once the read models caught up. */
    async function personsByDistinctId(): Promise<Map<string, PersonView>> {
      await readModelsCaughtUp(t);
      const res = await t.api('GET', `/api/projects/${t.projectId}/persons/?limit=1000`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.next ?? null, 'one page holds every person').toBeNull();
      const map = new Map<string, PersonView>();
      for (const person of res.body.results as PersonView[])
        for (const d of person.distinct_ids) map.set(d, person);
      return map;
    }

    /** The person of one distinct id, asked for as a user would. */
    async function personOf(distinctId: string): Promise<PersonView | null> {
      const res = await t.api(
        'GET',
        `/api/projects/${t.projectId}/persons/?distinct_id=${encodeURIComponent(distinctId)}`,
      );
      expect(res.status, res.text).toBe(200);
      return res.body.results[0] ?? null;
    }

    it('identify, alias, $set then $unset and $unset then $set of five users interleaved in one batch', async () => {
      const journeys = [1, 2, 3, 4, 5].map((i) => journey(`w${workers}-one-${i}`));
      const batch = interleave(journeys.flatMap((j) => [j.anonEvents, j.userEvents]));
      expect(batch).toHaveLength(40);
      if (workers > 1) expect(acrossPartitions(journeys, t.projectId, workers)).toBeGreaterThan(0);
      await capture(t, batch);

      const persons = await personsByDistinctId();
      expect(journeys.flatMap((j) => mismatches(j, persons))).toEqual([]);
      const first = journeys[0]!;
      const person = await personOf(first.alias);
      expect(person).toMatchObject({
        is_identified: true,
        properties: { email: `${first.user}@example.com`, j: 'again', step: 7, anon_seen: true },
      });
      expect(person!.properties).not.toHaveProperty('k');
      expect((await personOf(first.anon))?.id).toBe(person!.id);
    });

    it('the same stories split over two consecutive batches', async () => {
      const journeys = [1, 2, 3, 4, 5].map((i) => journey(`w${workers}-two-${i}`));
      if (workers > 1) expect(acrossPartitions(journeys, t.projectId, workers)).toBeGreaterThan(0);
      // first request: the anonymous pageviews and steps 1–3 ($set k, $unset j); second: steps 4–7
      await capture(
        t,
        interleave(journeys.flatMap((j) => [j.anonEvents, j.userEvents.slice(0, 3)])),
      );
      await capture(t, interleave(journeys.map((j) => j.userEvents.slice(3))));

      const persons = await personsByDistinctId();
      expect(journeys.flatMap((j) => mismatches(j, persons))).toEqual([]);
    });

    it('200 users, their events shuffled (each user’s in order) into batches of 100', {
      timeout: 120_000,
    }, async () => {
      const journeys = Array.from({ length: 200 }, (_, i) => journey(`w${workers}-many-${i}`));
      const events = shuffleKeepingOrder(
        journeys.flatMap((j) => [j.anonEvents, j.userEvents]),
        27,
      );
      expect(events).toHaveLength(1600);
      if (workers > 1)
        expect(acrossPartitions(journeys, t.projectId, workers)).toBeGreaterThan(100);
      for (let from = 0; from < events.length; from += 100)
        await capture(t, events.slice(from, from + 100));

      const persons = await personsByDistinctId();
      expect(journeys.flatMap((j) => mismatches(j, persons))).toEqual([]);
      // one person per user: nothing left behind by a merge
      const own = [...new Set(persons.values())].filter((p) =>
        p.distinct_ids.some((d) => d.startsWith(`w${workers}-many-`)),
      );
      expect(own).toHaveLength(200);
    });
  },
);
