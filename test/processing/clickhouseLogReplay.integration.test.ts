import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureStream } from '../../commands/capture/model/eventCaptured.ts';
import { runEventDeletions } from '../../processes/eventDeletion/eventDeletionJob.ts';
import { chProjectionsFor } from '../../projections/registry.ts';
import { postgresLogInClickHouse } from '../../src/processing/logInClickHouse.ts';
import { rebuildClickHouseModelsBeside } from '../../src/processing/rebuildClickHouseBeside.ts';
import { rebuildThroughServer } from '../../src/processing/rebuildRequests.ts';
import { type ClickHouse, openClickHouse } from '../../src/runtime/clickhouse.ts';
import { capture } from '../support/capture.ts';
import { personByDistinctId, personsPath } from '../support/personHttp.ts';
import { startTestService, type TestService } from '../support/testService.ts';

/**
 * `rebuild events` beside a running server on the embedded default: chDB reads the log from
 * Postgres itself and the read models build their rows in SQL (projections/events/eventsFromLog.ts,
 * the `person_distinct_id` projection's `fromLogChunk`). What it writes must be what the live
 * projection (Node) wrote, byte for byte, for events SQL handles and for those it hands to Node.
 */
let t: TestService;
let ch: ClickHouse;
beforeAll(async () => {
  t = await startTestService();
  ch = await openClickHouse(undefined, t.config.chdbPath, t.config.clickhouseDatabase);
});
afterAll(async () => {
  await ch?.close();
  await t?.close();
});

const rows = async (query: string) =>
  (await (await ch.client.query({ query, format: 'JSONCompactEachRow' })).json()) as unknown[][];

/** Every column but the insert time, in log order: what a rebuild must give again. */
const snapshot = async () => ({
  events: await rows(
    `SELECT * EXCEPT _timestamp FROM ${t.config.clickhouseDatabase}.events ORDER BY _offset`,
  ),
  // version is the position a row was written at: the live batch's, the rebuild's head
  owners: await rows(
    `SELECT team_id, distinct_id, person_id, is_deleted
       FROM ${t.config.clickhouseDatabase}.person_distinct_id FINAL ORDER BY team_id, distinct_id`,
  ),
});

const caughtUp = async () => {
  const head = await t.service.ctx.store.headPosition();
  for (const name of ['persons', 'clickhouse:events', 'clickhouse:person_distinct_id'])
    expect(await t.service.runners.get(name)!.waitFor(head, 20_000), name).toBe(true);
};

describe('rebuilding the ClickHouse read models with chDB reading the log', () => {
  it('gives the rows the live projection wrote, for tricky text, groups, merges and deleted persons', async () => {
    const ev = (distinctId: string, properties: Record<string, unknown>, event = 'seen') => ({
      event,
      properties: { distinct_id: distinctId, ...properties },
    });
    // group types get their indexes first, in this order (company 0, project 1)
    await capture(t, [ev('g-1', { $groups: { company: 'acme', project: 'p/1 #2' } })]);
    await capture(t, [
      ev('text', {
        a: 'é ü 日本 😀',
        sep: '\u2028\u2029',
        ctrl: '\u0001\u001f\t\n',
        q: 'quote " back \\ slash / done',
        lone: '\ud800x',
        n: [0.1, 1e21, 1e-7, -0, 123456789012345680000, 5e-324, 0.30000000000000004, 100],
        '1': 'integer key',
        nested: { properties: { timestamp: 'x' }, timestamp: '},"timestamp":"' },
        $elements_chain: 'a.btn:nth-child="1"nth-of-type="2"text="Buy"',
      }),
      ev('g-2', { $groups: { project: 'second', company: 'beta' } }),
      ev('g-null', { $groups: { company: null, project: 'kept' } }),
      ev('g-unknown', { $groups: { unknown_type: 'x', company: 'c' } }),
      // for Node: a key that is not plain ASCII, a number, an array of groups, a $group_N sent as is
      ev('g-utf8', { $groups: { company: 'Zürich' } }),
      ev('g-number', { $groups: { company: 42 } }),
      ev('g-array', { $groups: ['company'] }),
      ev('g-manual', { $group_0: 'manual', $groups: { company: 'acme' } }),
      ev('personless', { $process_person_profile: false, $groups: { company: 'acme' } }),
      ev('sur\ud800rogate', { plain: true }),
    ]);
    // the person sets readers derive from the compact record (GeoIP mirrored, automatic keys)
    const web = {
      $ip: '81.2.69.142',
      $browser: 'Chrome',
      $os: 'Mac OS X',
      $current_url: 'https://example.com/a/b?c=d&e=%20',
      $screen_height: 1080,
      $viewport_width: 0.5,
      utm_source: 'Zürich 😀 "news"',
      gclid: null,
    };
    await capture(t, [
      ev('web-1', web, '$pageview'),
      ev('web-2', {
        ...web,
        $set: { plan: 'pro', $browser: 'mine', __proto__: 1 },
        $set_once: { first: 1 },
      }),
      ev('web-3', { $os_name: 'iOS', $os: null, $set_once: { $initial_browser: 'kept' } }),
      ev('web-4', { $is_server: true, $os: 'Linux', $os_version: '6', utm_medium: 'mail' }),
      ev('web-5', { $browser: 'Safari', $set: {} }, '$snapshot'),
      ev('web-6', { $ip: '81.2.69.142', $geoip_disable: true, $browser: 'Edge' }),
      ev('web-7', { $ip: '81.2.69.142' }),
      ev('web-8', { $set: 'not an object', $set_once: { $initial_geoip_city_name: 'x' } }),
      // for Node: values ClickHouse prints its own way, a client set naming a GeoIP key
      ev('web-node-1', { $referrer: 'a\u001fb' }),
      ev('web-node-2', { $screen_width: 1e21 }),
      ev('web-node-3', { $app_build: { nested: [1, 'x'] } }),
      ev('web-node-4', { $ip: '81.2.69.142', $set: { $geoip_city_name: 'mine' } }),
    ]);
    await capture(t, [ev('anon-1', { $set: { plan: 'free' } }, '$pageview')]);
    await capture(t, [
      ev('user-1', { $anon_distinct_id: 'anon-1', $set: { email: 'u@example.com' } }, '$identify'),
    ]);
    await capture(t, [ev('user-1', { alias: 'alias-1' }, '$create_alias')]);
    // a person deleted with its events: the rebuild must leave them out too
    await capture(t, [ev('gone', { n: 1 }), ev('gone', { n: 2 })]);
    await caughtUp();
    const gone = await personByDistinctId(t, 'gone');
    expect((await t.api('DELETE', personsPath(t, `${gone.id}/?delete_events=true`))).status).toBe(
      204,
    );
    await runEventDeletions({
      store: t.service.ctx.store,
      pool: t.service.ctx.pool,
      clickhouse: ch,
      awaitProjection: t.service.ctx.awaitProjection,
    });
    await capture(t, [ev('gone', { n: 3, after: 'the deletion' })]);
    // a record in another layout (properties last): not SQL's to cut, Node's to replay
    await t.service.ctx.store.appendToStream(
      captureStream(t.projectId, 'reordered'),
      [
        {
          type: 'EventCaptured',
          data: {
            uuid: randomUUID(),
            projectId: t.projectId,
            event: 'reordered',
            distinctId: 'reordered',
            timestamp: '2026-01-02T03:04:05.678Z',
            elementsChain: '',
            sentAt: null,
            receivedAt: '2026-01-02T03:04:05.678Z',
            ip: null,
            properties: { distinct_id: 'reordered', $groups: { company: 'acme' } },
          },
          metadata: { occurredAt: '2026-01-02T03:04:05.678Z' },
        },
      ],
      { expectedRevision: 'any' },
    );
    await caughtUp();
    const live = await snapshot();
    const liveEvents = live.events.map((r) => r[6]);
    // (ClickHouse keeps the lone surrogate's bytes in its own way: found by its ends)
    expect(liveEvents.filter((d) => /^sur.*rogate$/.test(String(d)))).toHaveLength(1);
    expect(liveEvents.filter((d) => d === 'gone')).toHaveLength(1);

    const rebuilt = await rebuildThroughServer(t.service.ctx.pool, 'events', { pollMs: 50 });
    const replayed = Object.fromEntries(rebuilt.map((r) => [r.name, r.replayed]));
    const after = await snapshot();
    expect(after.owners).toEqual(live.owners);
    expect(after.events).toHaveLength(live.events.length);
    for (const [i, row] of after.events.entries()) expect(row).toEqual(live.events[i]);
    const captured = live.events.length + 2; // the two deleted events are in the log
    // SQL built most rows; the ones it cannot reproduce went through Node
    expect(replayed['clickhouse:events']).toEqual({
      inClickHouse: captured - 11,
      inNode: 11, // utf8, number, array, manual, reordered, the two deleted, web-node-1…4
    });
    expect(replayed['clickhouse:person_distinct_id']!.inNode).toBeGreaterThanOrEqual(2);
    expect(replayed['clickhouse:person_distinct_id']!.inClickHouse).toBeGreaterThan(10);
  });

  it('replays through Node when ClickHouse cannot reach the log', async () => {
    await capture(t, [
      { event: 'unreachable', properties: { distinct_id: 'u-1', $groups: { company: 'x' } } },
    ]);
    await caughtUp();
    const live = await snapshot();
    const started = Date.now();
    const rebuilt = await rebuildClickHouseModelsBeside({
      store: t.service.ctx.store,
      pool: t.service.ctx.pool,
      ch,
      projections: chProjectionsFor(t.service.ctx.pool),
      runners: t.service.runners,
      // nothing listens on port 1
      log: postgresLogInClickHouse('postgresql://user:secret@127.0.0.1:1/hogstream')!,
    });
    expect(Date.now() - started).toBeLessThan(30_000);
    // the table function carries the password: a message quoting the statement must not
    const log = postgresLogInClickHouse('postgresql://user:s%27cret@127.0.0.1:1/hogstream')!;
    expect(log.table).toContain("'s\\'cret'");
    expect(log.redact(`Code: 62. Syntax error in SELECT * FROM ${log.table}`)).not.toMatch(/cret/);
    expect(rebuilt.map((r) => r.replayed)).toEqual([undefined, undefined]);
    expect(await snapshot()).toEqual(live);
  });
});
