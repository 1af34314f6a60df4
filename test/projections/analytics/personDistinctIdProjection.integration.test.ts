import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personDistinctIdProjection } from '../../../projections/analytics/personDistinctIdProjection.ts';
import { personMappingLookup } from '../../../projections/persons/personMappingLookup.ts';
import { createClickHouseProjectionRunner } from '../../../src/processing/clickhouseProjectionRunner.ts';
import { rebuildThroughServer } from '../../../src/processing/rebuildRequests.ts';
import type { ClickHouse } from '../../../src/runtime/clickhouse.ts';
import { capture } from '../../support/capture.ts';
import { personByDistinctId, personsPath } from '../../support/personHttp.ts';
import { startTestService, type TestService } from '../../support/testService.ts';

// The ClickHouse read model `person_distinct_id` (each distinct id's person after merges, splits
// and deletions), fed from a history captured through /batch/ and changed by the persons REST
// commands. Expectations are written by hand from the history below.
let t: TestService;
let ch: ClickHouse;
const COPY_DB = () => `${t.config.clickhouseDatabase}_pdi_copy`;

const event = (name: string, distinctId: string, minute: number, properties = {}) => ({
  event: name,
  distinct_id: distinctId,
  timestamp: new Date(Date.UTC(2024, 2, 1, 10, minute)).toISOString(),
  properties,
});

beforeAll(async () => {
  t = await startTestService();
  const { openClickHouse } = await import('../../../src/runtime/clickhouse.ts');
  ch = await openClickHouse(undefined, t.config.chdbPath, t.config.clickhouseDatabase);
  // each step its own request: the log order of one request is kept per distinct id only
  const steps = [
    [
      event('$pageview', 'anon-1', 0),
      event('$pageview', 'anon-2', 1),
      event('$pageview', 'bob', 2),
      event('$pageview', 'carol', 3),
      event('$pageview', 'dave', 4),
    ],
    // two anonymous ids identified as one user: both merge into alice's person
    [event('$identify', 'alice', 5, { $anon_distinct_id: 'anon-1' })],
    [event('$identify', 'alice', 6, { $anon_distinct_id: 'anon-2' })],
    // bob gets an alias, then bob's person (alias included) is merged into alice's
    [event('$create_alias', 'bob', 7, { alias: 'bob-alias' })],
    [event('$merge_dangerously', 'alice', 8, { alias: 'bob' })],
    [event('$identify', 'dave-user', 9, { $anon_distinct_id: 'dave' })],
  ];
  for (const batch of steps) await capture(t, batch);
  // dave's person is split back into two; carol's person is deleted
  const dave = await personByDistinctId(t, 'dave-user');
  const split = await t.api('POST', personsPath(t, `${dave.id}/split/`), {
    main_distinct_id: 'dave-user',
  });
  expect(split.status, split.text).toBe(200);
  const carol = await personByDistinctId(t, 'carol');
  const deleted = await t.api('DELETE', personsPath(t, `${carol.id}/`));
  expect(deleted.status, deleted.text).toBe(204);
}, 120_000);
afterAll(async () => {
  await ch?.client.command({ query: `DROP DATABASE IF EXISTS ${COPY_DB()}` }).catch(() => {});
  await ch?.close();
  await t?.close();
});

type Mapping = { distinct_id: string; person_id: string; is_deleted: number };

/** The mapping as the analytics readers read it: the newest row of each distinct id. */
async function mappingIn(database: string): Promise<Mapping[]> {
  const r = await ch.client.query({
    query: `SELECT distinct_id, toString(argMax(person_id, version)) AS person_id,
                   argMax(is_deleted, version) AS is_deleted
              FROM ${database}.person_distinct_id WHERE team_id = {team:Int64}
             GROUP BY distinct_id ORDER BY distinct_id`,
    query_params: { team: t.projectId },
    format: 'JSONEachRow',
  });
  return ((await r.json()) as Mapping[]).map((m) => ({ ...m, is_deleted: Number(m.is_deleted) }));
}

/** The distinct ids grouped by person (ids sorted), and the ids of deleted persons. */
function partition(rows: Mapping[]) {
  const byPerson = new Map<string, string[]>();
  for (const r of rows.filter((r) => r.is_deleted === 0))
    byPerson.set(r.person_id, [...(byPerson.get(r.person_id) ?? []), r.distinct_id]);
  return {
    persons: [...byPerson.values()].map((ids) => ids.sort()).sort(),
    deleted: rows.filter((r) => r.is_deleted === 1).map((r) => r.distinct_id),
  };
}

const caughtUp = async () => {
  const head = await t.service.ctx.store.headPosition();
  expect(await t.service.runners.get('clickhouse:person_distinct_id')!.waitFor(head, 20_000)).toBe(
    true,
  );
};

describe('ClickHouse person_distinct_id', () => {
  it('maps every distinct id to its person after merges, splits and deletions', async () => {
    await caughtUp();
    const rows = await mappingIn(t.config.clickhouseDatabase);
    expect(partition(rows)).toEqual({
      persons: [['alice', 'anon-1', 'anon-2', 'bob', 'bob-alias'], ['dave'], ['dave-user']],
      deleted: ['carol'],
    });
    // the person ids are the persons' uuids in Postgres (the persons list's `uuid`)
    const alice = await personByDistinctId(t, 'anon-2');
    const daveUser = await personByDistinctId(t, 'dave-user');
    const dave = await personByDistinctId(t, 'dave');
    const uuidOf = (id: string) => rows.find((r) => r.distinct_id === id)!.person_id;
    expect(uuidOf('bob-alias')).toBe(alice.uuid);
    expect(uuidOf('dave-user')).toBe(daveUser.uuid);
    expect(uuidOf('dave')).toBe(dave.uuid);
  });

  it('counts the merged person once in a chart, and leaves the deleted person out', async () => {
    await caughtUp();
    const events = encodeURIComponent(JSON.stringify([{ id: '$pageview', math: 'dau' }]));
    const res = await t.api(
      'GET',
      `/api/projects/${t.projectId}/insights/trend/?events=${events}&date_from=2024-03-01&date_to=2024-03-01&interval=day`,
    );
    expect(res.status, res.text).toBe(200);
    // pageviews: anon-1, anon-2, bob (one person: alice's), dave; carol's person is deleted
    expect(res.body.result[0].data).toEqual([2]);
  });

  it('rebuilds from the log to the same mapping', async () => {
    await caughtUp();
    const live = await mappingIn(t.config.clickhouseDatabase);
    const copy = { ...personDistinctIdProjection(personMappingLookup(t.service.ctx.pool)) };
    const rebuilt = { ...copy, version: 99 };
    await ch.client.command({ query: `CREATE DATABASE IF NOT EXISTS ${COPY_DB()}` });
    const runner = createClickHouseProjectionRunner(
      t.service.ctx.store,
      t.service.ctx.pool,
      { ...ch, database: COPY_DB() },
      rebuilt,
      { batchSize: 3 },
    );
    await runner.start();
    expect(await runner.waitFor(await t.service.ctx.store.headPosition(), 20_000)).toBe(true);
    await runner.stop();
    expect(await mappingIn(COPY_DB())).toEqual(live);
  });

  it('is rebuilt beside the running server (ids gathered, written once) to the same mapping', async () => {
    await caughtUp();
    const live = await mappingIn(t.config.clickhouseDatabase);
    const rebuilt = await rebuildThroughServer(t.service.ctx.pool, 'events', { pollMs: 50 });
    expect(rebuilt.map((r) => r.name)).toContain('clickhouse:person_distinct_id');
    expect(await mappingIn(t.config.clickhouseDatabase)).toEqual(live);
  });

  it('writes no row for ordinary events of ids it has written, and still follows a later merge', async () => {
    await caughtUp();
    // the version of a distinct id's newest row: each write stamps its batch's position
    const versionsOf = async (ids: string[]) => {
      const r = await ch.client.query({
        query: `SELECT distinct_id, toString(max(version)) AS v FROM ${t.config.clickhouseDatabase}.person_distinct_id
                 WHERE team_id = {team:Int64} AND distinct_id IN {ids:Array(String)}
                 GROUP BY distinct_id ORDER BY distinct_id`,
        query_params: { team: t.projectId, ids },
        format: 'JSONEachRow',
      });
      return Object.fromEntries(
        ((await r.json()) as { distinct_id: string; v: string }[]).map((x) => [x.distinct_id, x.v]),
      );
    };
    await capture(t, [event('$pageview', 'erin', 10), event('$pageview', 'frank', 10)]);
    await caughtUp();
    const before = await versionsOf(['erin', 'frank']);
    expect(Object.keys(before)).toEqual(['erin', 'frank']);
    // three more requests of ordinary events: the mapping of erin and frank does not change
    for (const minute of [11, 12, 13])
      await capture(t, [event('$pageview', 'erin', minute), event('$pageview', 'frank', minute)]);
    await caughtUp();
    expect(await versionsOf(['erin', 'frank'])).toEqual(before);
    // frank identifies as erin: frank's id moves to erin's person, and the next ordinary event
    // of frank is counted with erin's person
    await capture(t, [event('$identify', 'erin', 14, { $anon_distinct_id: 'frank' })]);
    await capture(t, [event('$pageview', 'frank', 15)]);
    await caughtUp();
    const rows = await mappingIn(t.config.clickhouseDatabase);
    const erin = await personByDistinctId(t, 'erin');
    const ownerOf = (id: string) => rows.find((r) => r.distinct_id === id)?.person_id;
    expect(ownerOf('frank')).toBe(erin.uuid);
    expect(ownerOf('erin')).toBe(erin.uuid);
  });
});
