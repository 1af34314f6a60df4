import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClickHouse, openClickHouse } from '../../src/runtime/clickhouse.ts';
import { capture } from '../support/capture.ts';
import { readModelsCaughtUp } from '../support/readModelsCaughtUp.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * Issue #27 (with #25's parking): a read model refuses one event of a `/batch/` of 100 sent over
 * HTTP. That event alone is parked; the other 99 reach every read model (persons and their
 * distinct ids in Postgres and ClickHouse, the events API), and the next batch arrives too.
 *
 * Capture accepts nothing a store refuses any more (the older poison values of #25 are cut or
 * refused at the door), so the store is made to refuse one distinct id by a constraint added by
 * this test: in Postgres a CHECK (SQLSTATE 23514, about the values: parked); in ClickHouse a CHECK
 * whose refusal is a parse error (code 6, about the values), because a plain CHECK's
 * VIOLATED_CONSTRAINT (469) counts as the store's failure and is retried, never parked.
 */
let t: TestService;
let ch: ClickHouse;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestService();
  ch = await openClickHouse(undefined, t.config.chdbPath, t.config.clickhouseDatabase);
  db = new pg.Client({ connectionString: t.config.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await ch?.close();
  await t?.close();
});

const CONSTRAINT = 'test_refuses_one_distinct_id';

type Sent = { uuid: string; distinctId: string; n: number };

/**
 * 100 events named `name`, each of its own distinct id with a `$set`; with `refused`, the one at
 * `refused.at` is the refused id's.
 */
function batchOf100(prefix: string, name: string, refused?: { id: string; at: number }) {
  const sent: Sent[] = Array.from({ length: 100 }, (_, n) => ({
    uuid: uuidv7(),
    distinctId: n === refused?.at ? refused.id : `${prefix}-${n}`,
    n,
  }));
  const batch = sent.map((s) => ({
    uuid: s.uuid,
    event: name,
    timestamp: new Date().toISOString(),
    properties: { distinct_id: s.distinctId, $lib: 'web', $set: { n: s.n } },
  }));
  return { sent, batch };
}

type Status = {
  read_models: { name: string; parked_events: number }[];
  parked: { read_model: string; error: string }[];
};
const status = async (): Promise<Status> => {
  const res = await t.api('GET', '/api/projections/');
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const parkedByModel = (s: Status) =>
  Object.fromEntries(s.read_models.map((m) => [m.name, m.parked_events]));

/** The ids of the events API's events named `name`. */
async function eventIdsNamed(name: string): Promise<string[]> {
  const res = await t.api(
    'GET',
    `/api/projects/${t.projectId}/events/?event=${encodeURIComponent(name)}&limit=1000`,
  );
  expect(res.status, res.text).toBe(200);
  return res.body.results.map((e: { id: string }) => e.id).sort();
}

type PersonView = { uuid: string; distinct_ids: string[]; properties: Record<string, unknown> };

/** distinct id → person, for the persons the persons API lists with an id starting with `prefix`. */
async function personsWith(prefix: string): Promise<Map<string, PersonView>> {
  const res = await t.api('GET', `/api/projects/${t.projectId}/persons/?limit=1000`);
  expect(res.status, res.text).toBe(200);
  const out = new Map<string, PersonView>();
  for (const p of res.body.results as PersonView[])
    for (const d of p.distinct_ids) if (d.startsWith(prefix)) out.set(d, p);
  return out;
}

/** distinct id → person uuid in ClickHouse's person_distinct_id (what analytics count persons by). */
async function clickHousePersonsWith(prefix: string): Promise<Map<string, string>> {
  const result = await ch.client.query({
    query: `SELECT distinct_id, toString(argMax(person_id, version)) FROM ${t.config.clickhouseDatabase}.person_distinct_id
      WHERE team_id = {team:Int64} AND startsWith(distinct_id, {prefix:String})
      GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0`,
    query_params: { team: t.projectId, prefix },
    format: 'JSONCompactEachRow',
  });
  return new Map((await result.json()) as [string, string][]);
}

/** Everything a good event of the batch should have left in the read models. */
async function expectReached(good: Sent[], name: string, prefix: string) {
  const persons = await personsWith(prefix);
  const inClickHouse = await clickHousePersonsWith(prefix);
  const missing = good.flatMap((s) => {
    const person = persons.get(s.distinctId);
    if (!person) return [`${s.distinctId}: no person`];
    if (person.properties.n !== s.n) return [`${s.distinctId}: n is ${person.properties.n}`];
    if (inClickHouse.get(s.distinctId) !== person.uuid)
      return [`${s.distinctId}: person_distinct_id says ${inClickHouse.get(s.distinctId)}`];
    return [];
  });
  expect(missing).toEqual([]);
  expect(await eventIdsNamed(name)).toEqual(expect.arrayContaining(good.map((s) => s.uuid)));
}

describe('one event of a batch of 100 that a read model refuses', () => {
  it('the persons read model (Postgres) parks that event only; the other 99 reach every read model', {
    timeout: 60_000,
  }, async () => {
    const before = parkedByModel(await status());
    await db.query(
      `ALTER TABLE person_distinct_ids ADD CONSTRAINT ${CONSTRAINT} CHECK (distinct_id <> 'pg-refused')`,
    );
    const { sent, batch } = batchOf100('pg', 'pg batch', { id: 'pg-refused', at: 42 });
    await capture(t, batch);
    await readModelsCaughtUp(t);

    const after = await status();
    expect(parkedByModel(after)).toEqual({ ...before, persons: (before.persons ?? 0) + 1 });
    const parked = after.parked.filter((p) => p.read_model === 'persons');
    expect(parked).toHaveLength(1);
    expect(parked[0]!.error).toContain(CONSTRAINT);

    const good = sent.filter((s) => s.distinctId !== 'pg-refused');
    expect(good).toHaveLength(99);
    await expectReached(good, 'pg batch', 'pg-');
    expect((await personsWith('pg-refused')).size).toBe(0);
    // ClickHouse's events model refused nothing: it has the refused person's event too
    expect(await eventIdsNamed('pg batch')).toEqual(sent.map((s) => s.uuid).sort());

    // not stuck: the next batch reaches the read models, nothing more is parked
    const next = batchOf100('pg-next', 'pg next batch');
    await capture(t, next.batch);
    await readModelsCaughtUp(t);
    await expectReached(next.sent, 'pg next batch', 'pg-next-');
    expect(parkedByModel(await status())).toEqual(parkedByModel(after));
  });

  it('the ClickHouse events model parks that event only; the other 99 reach every read model', {
    timeout: 60_000,
  }, async () => {
    const before = parkedByModel(await status());
    // short-circuit `OR`: only the refused id's row is parsed as a number, and fails to
    await ch.client.command({
      query: `ALTER TABLE ${t.config.clickhouseDatabase}.events ADD CONSTRAINT ${CONSTRAINT}
        CHECK distinct_id != 'ch-refused' OR toUInt8(distinct_id) = 0`,
    });
    const { sent, batch } = batchOf100('ch', 'ch batch', { id: 'ch-refused', at: 57 });
    await capture(t, batch);
    await readModelsCaughtUp(t);

    const after = await status();
    const events = 'clickhouse:events';
    expect(parkedByModel(after)).toEqual({ ...before, [events]: (before[events] ?? 0) + 1 });
    const parked = after.parked.filter((p) => p.read_model === events);
    expect(parked).toHaveLength(1);
    expect(parked[0]!.error).toContain("'ch-refused'");

    const good = sent.filter((s) => s.distinctId !== 'ch-refused');
    expect(good).toHaveLength(99);
    await expectReached(good, 'ch batch', 'ch-');
    expect(await eventIdsNamed('ch batch')).toEqual(good.map((s) => s.uuid).sort());
    // the persons read model refused nothing: the refused event's person is there
    expect((await personsWith('ch-refused')).get('ch-refused')?.properties.n).toBe(57);

    const next = batchOf100('ch-next', 'ch next batch');
    await capture(t, next.batch);
    await readModelsCaughtUp(t);
    await expectReached(next.sent, 'ch next batch', 'ch-next-');
    expect(await eventIdsNamed('ch next batch')).toEqual(next.sent.map((s) => s.uuid).sort());
    expect(parkedByModel(await status())).toEqual(parkedByModel(after));
  });
});
