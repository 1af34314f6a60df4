import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEventDeletions } from '../../processes/eventDeletion/eventDeletionJob.ts';
import { eventsProjection } from '../../projections/events/eventsProjection.ts';
import { chProjectionsFor } from '../../projections/registry.ts';
import type { ChProjection } from '../../src/processing/clickhouseProjection.ts';
import { createClickHouseProjectionRunner } from '../../src/processing/clickhouseProjectionRunner.ts';
import { type ClickHouse, openClickHouse } from '../../src/runtime/clickhouse.ts';
import {
  capture,
  eventsOf,
  getPerson,
  identifiedPerson,
  personByDistinctId,
  personsPath,
  uniqueId,
} from '../support/personHttp.ts';
import { startTestService, type TestService } from '../support/testService.ts';
import { expectError, expectValidation } from './helpers.ts';

/**
 * DELETE persons/:id/ over HTTP, with and without `delete_events`: the deletion is queued, the job
 * (run here through its exported function) removes the events from ClickHouse and records it in
 * the log, and replaying the log into ClickHouse does not bring them back.
 */
let t: TestService;
let ch: ClickHouse;
beforeAll(async () => {
  // A write waits for its read models at most this long: long enough that a wait for a position
  // the read model never reaches shows up as a slow request (checked below).
  t = await startTestService({ READ_YOUR_WRITES_TIMEOUT_MS: '20000' });
  ch = await openClickHouse(undefined, t.config.chdbPath, t.config.clickhouseDatabase);
});
afterAll(async () => {
  await ch?.close();
  await t?.close();
});

/** Copied from README.md "Deleting a person's events". */
const README_ERASE_SQL = `
  DELETE FROM event_log l
   USING event_deletion_queue q, unnest(q.distinct_ids) AS d(distinct_id)
   WHERE q.deleted_at IS NOT NULL AND l.type = 'EventCaptured'
     AND l.stream_name = 'capture-' || q.project_id || ':' || d.distinct_id
     AND l.position <= q.up_to_position;`;

const runJob = () =>
  runEventDeletions({
    store: t.service.ctx.store,
    pool: t.service.ctx.pool,
    clickhouse: ch,
    awaitProjection: t.service.ctx.awaitProjection,
  });
const queueRows = async (personUuid: string) =>
  (
    await t.service.ctx.pool.query(
      'SELECT distinct_ids, up_to_position, deleted_at FROM event_deletion_queue WHERE person_uuid = $1',
      [personUuid],
    )
  ).rows;

async function countIn(database: string, ids: string[]): Promise<Record<string, number>> {
  if (database === t.config.clickhouseDatabase) {
    const [newest] = await t.service.ctx.store.readAll({
      direction: 'backwards',
      before: 'end',
      maxCount: 1,
      filter: { eventTypes: ['EventCaptured'] },
    });
    expect(
      await t.service.runners.get('clickhouse:events')!.waitFor(newest!.position, 20_000),
    ).toBe(true);
  }
  const r = await ch.client.query({
    query: `SELECT distinct_id, count() AS n FROM ${database}.events WHERE distinct_id IN {ids:Array(String)} GROUP BY distinct_id`,
    query_params: { ids },
    format: 'JSONEachRow',
  });
  const rows = (await r.json()) as { distinct_id: string; n: string }[];
  return Object.fromEntries(
    ids.map((id) => [id, Number(rows.find((x) => x.distinct_id === id)?.n ?? 0)]),
  );
}

/** Replays the whole log into a fresh ClickHouse database, as a rebuild of the events projection does. */
async function replayInto(projection: ChProjection, version: number): Promise<string> {
  const database = `${t.config.clickhouseDatabase}_replay_${version}`;
  await ch.client.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
  const runner = createClickHouseProjectionRunner(
    t.service.ctx.store,
    t.service.ctx.pool,
    { ...ch, database },
    { ...projection, version },
  );
  await runner.start();
  const [newest] = await t.service.ctx.store.readAll({
    direction: 'backwards',
    before: 'end',
    maxCount: 1,
    filter: { eventTypes: ['EventCaptured'] },
  });
  expect(await runner.waitFor(newest!.position, 30_000)).toBe(true);
  await runner.stop();
  return database;
}

describe('DELETE persons/:id/', () => {
  it('without delete_events: 204 and no body; the person is gone, its events stay, nothing is queued', async () => {
    const { person, anon, user } = await identifiedPerson(t, 'del-keep');
    const res = await t.api('DELETE', personsPath(t, `${person.id}/`));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await getPerson(t, person.id), 404);
    expect(await personByDistinctId(t, user)).toBeNull();
    expect(await eventsOf(t, anon)).toHaveLength(1);
    expect(await eventsOf(t, user)).toHaveLength(2);
    expect(await queueRows(person.uuid)).toEqual([]);
    expectError(await t.api('DELETE', personsPath(t, `${person.id}/`)), 404);
  });

  it('by uuid; delete_events must be a boolean', async () => {
    const { person } = await identifiedPerson(t, 'del-uuid');
    expectValidation(
      await t.api('DELETE', personsPath(t, `${person.id}/?delete_events=maybe`)),
      'delete_events',
    );
    expect((await getPerson(t, person.id)).status).toBe(200);
    expect(
      (await t.api('DELETE', personsPath(t, `${person.uuid}/?delete_events=false`))).status,
    ).toBe(204);
    expectError(await getPerson(t, person.id), 404);
    expect(await queueRows(person.uuid)).toEqual([]);
  });

  it('with delete_events: queued, then the job deletes the events, once, and a replay of the log does not bring them back', async () => {
    const { person, anon, user, device } = await identifiedPerson(t, 'del-events');
    const bystander = uniqueId('bystander');
    await capture(t, { event: 'kept', distinct_id: bystander });
    const ids = [anon, user, device, bystander];
    expect(Object.values(await countIn(t.config.clickhouseDatabase, ids)).every((n) => n > 0)).toBe(
      true,
    );

    const started = Date.now();
    const res = await t.api('DELETE', personsPath(t, `${person.id}/?delete_events=true`));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await getPerson(t, person.id), 404);

    // Queued, not run: the events are all still there.
    const [queued] = await queueRows(person.uuid);
    expect(queued).toMatchObject({ deleted_at: null });
    expect([...queued.distinct_ids].sort()).toEqual([anon, user, device].sort());
    expect(await eventsOf(t, anon)).toHaveLength(1);
    expect(await eventsOf(t, user)).toHaveLength(2);
    expect(await eventsOf(t, device)).toHaveLength(1);

    // The same anonymous id comes back after the deletion: a new person, whose event is not deleted.
    await capture(t, { event: 'came-back', distinct_id: anon });
    const newcomer = await personByDistinctId(t, anon);
    expect(newcomer.id).not.toBe(person.id);

    expect(await runJob()).toEqual({ ran: true, deleted: 1, waiting: 0 });
    expect((await eventsOf(t, anon)).map((e) => e.event)).toEqual(['came-back']);
    expect(await eventsOf(t, user)).toEqual([]);
    expect(await eventsOf(t, device)).toEqual([]);
    expect((await eventsOf(t, bystander)).map((e) => e.event)).toEqual(['kept']);
    expect(await countIn(t.config.clickhouseDatabase, ids)).toEqual({
      [anon]: 1,
      [user]: 0,
      [device]: 0,
      [bystander]: 1,
    });

    // Done and recorded: the queue row is closed, the log says so, and a second run finds nothing.
    const [done] = await queueRows(person.uuid);
    expect(done.deleted_at).toBeInstanceOf(Date);
    const recorded = (
      await t.service.ctx.store.readAll({ filter: { eventTypes: ['PersonEventsDeleted'] } })
    ).filter((e) => (e.data as { personUuid: string }).personUuid === person.uuid);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.data).toMatchObject({
      projectId: t.projectId,
      upToPosition: String(queued.up_to_position),
    });
    expect(await runJob()).toEqual({ ran: true, deleted: 0, waiting: 0 });
    expect(await eventsOf(t, anon)).toHaveLength(1);

    // The captured events are still in the log; replaying it as the server does leaves them out,
    // while the plain projection (no deletion filter) would write them again.
    const filtered = await replayInto(chProjectionsFor(t.service.ctx.pool)[0]!, 97);
    expect(await countIn(filtered, ids)).toEqual({
      [anon]: 1,
      [user]: 0,
      [device]: 0,
      [bystander]: 1,
    });
    const unfiltered = await replayInto(eventsProjection, 96);
    expect(await countIn(unfiltered, ids)).toEqual({
      [anon]: 2,
      [user]: 2,
      [device]: 1,
      [bystander]: 1,
    });

    // The README's SQL erases them from the Postgres log too, and only them.
    const inLog = async () =>
      (
        await t.service.ctx.pool.query<{ d: string; n: string }>(
          `SELECT split_part(stream_name, ':', 2) AS d, count(*) AS n FROM event_log
        WHERE type = 'EventCaptured' AND stream_name = ANY($1::text[]) GROUP BY 1`,
          [ids.map((d) => `capture-${t.projectId}:${d}`)],
        )
      ).rows
        .map((r) => [r.d, Number(r.n)])
        .sort();
    expect(await inLog()).toEqual(
      [
        [anon, 2],
        [bystander, 1],
        [device, 1],
        [user, 2],
      ].sort(),
    );
    await t.service.ctx.pool.query(README_ERASE_SQL);
    expect(await inLog()).toEqual(
      [
        [anon, 1],
        [bystander, 1],
      ].sort(),
    );
  });

  it('the job leaves an entry queued while ClickHouse has not written all of its events', async () => {
    const { person, user } = await identifiedPerson(t, 'del-wait');
    const runner = t.service.runners.get('clickhouse:events')!;
    await runner.stop(); // ClickHouse falls behind the log
    try {
      await capture(t, { event: 'late', distinct_id: user });
      expect((await t.api('DELETE', personsPath(t, `${person.id}/?delete_events=1`))).status).toBe(
        204,
      );
      expect(await runJob()).toEqual({ ran: true, deleted: 0, waiting: 1 });
      expect((await queueRows(person.uuid))[0].deleted_at).toBeNull();
    } finally {
      await runner.start();
    }
    expect(await eventsOf(t, user)).toHaveLength(3); // caught up: both $identify and 'late'
    expect(await runJob()).toEqual({ ran: true, deleted: 1, waiting: 0 });
    expect(await eventsOf(t, user)).toEqual([]);
  });

  it('the server runs the queue on its EVENT_DELETION_SCHEDULE', async () => {
    const scheduled = await startTestService({ EVENT_DELETION_SCHEDULE: '* * * * * *' });
    try {
      const { person, user } = await identifiedPerson(scheduled, 'del-scheduled');
      expect(await eventsOf(scheduled, user)).toHaveLength(2);
      expect(
        (await scheduled.api('DELETE', personsPath(scheduled, `${person.id}/?delete_events=true`)))
          .status,
      ).toBe(204);
      const deadline = Date.now() + 15_000;
      while ((await eventsOf(scheduled, user)).length > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 200));
      expect(await eventsOf(scheduled, user)).toEqual([]);
    } finally {
      await scheduled.close();
    }
  });
});
